"""Reads dochub's llms files with the llms.txt format's reference implementation (PyPI
`llms-txt`, pinned in .ci/run), for tests/tests/llms.rs. Prints one JSON object.

    reference.py parse FILE   {"title", "summary", "info", "sections": [[name, [{title, url, desc}]]]}
                              or {"error": "<the exception>"} when the parser fails on it
    reference.py ctx FILE     {"ctx": the full context the reference tool builds from FILE,
                              fetching every link, the Optional section included}
"""

import json
import sys

from llms_txt import create_ctx, parse_llms_file


def main():
    mode, path = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if mode == "ctx":
        out = {"ctx": create_ctx(text, optional=True)}
    else:
        try:
            parsed = parse_llms_file(text)
        except Exception as e:  # the test reports what the parser raised
            out = {"error": f"{type(e).__name__}: {e}"}
        else:
            out = {
                "title": parsed.title,
                "summary": parsed.summary,
                "info": parsed.info,
                # A list, so that the sections keep their order in JSON.
                "sections": [
                    [name, [dict(link) for link in links]]
                    for name, links in parsed.sections.items()
                ],
            }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
