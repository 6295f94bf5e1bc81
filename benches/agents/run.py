"""The agents benchmark's driver (see benches/agents.sh): asks every question of a question set
through dochub's MCP server with the official Python MCP SDK, over stdio (`dochub mcp`) and
over Streamable HTTP (`/mcp`), and prints how many were answered, in how many calls and tokens;
then times `search_docs` over `/mcp` against the same `/api/search`.

Usage: python run.py QUESTIONS_JSON BASE_URL DOCHUB_BIN

An answer counts when its text holds every `must_contain` string of the question. The agent
the benchmark plays: call 1 is `query_docs` with a budget of FIRST_BUDGET tokens; when that
misses and a section of it was cut, call 2 reads on where the cut says (`read_doc` with the
path, anchor and offset), within what is left of BUDGET. For comparison, the way agents read
before sections: `search_docs`, then the best hit's whole page. Tokens are counted as dochub counts
them (UTF-8 bytes / 3, rounded up): the benchmark checks that no answer counts more than its
max_tokens. A question pinned to a version fails, whatever its text holds, when any section of
an answer comes from another version of that project.
"""

import asyncio
import json
import re
import statistics
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

BUDGET = 2000
FIRST_BUDGET = 1500
HEADER = re.compile(r"^--- ([^#\s]+)(?:#(\S+))? \(", re.M)
READ_ON = re.compile(r"Read on with path `([^`]+)`(?:, anchor `([^`]+)`)?, offset (\d+)\.\]")


def tokens(text):
    return -(-len(text.encode()) // 3)


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def version_violation(question, text):
    pinned = question.get("version")
    if not pinned:
        return False
    for path, _ in HEADER.findall(text):
        parts = path.split("/")
        if len(parts) == 3 and re.fullmatch(r"v\d+", parts[1]) and parts[1] != pinned:
            return True
    return False


async def ask(session, question):
    """One question as the agent asks it: (answered, calls, tokens, over_budget, wrong_version)."""
    args = {"query": question["question"], "max_tokens": FIRST_BUDGET}
    if question.get("version"):
        args["version"] = question["version"]
    first = text_of(await session.call_tool("query_docs", args))
    used = tokens(first)
    over = used > FIRST_BUDGET
    wrong = version_violation(question, first)
    answered = all(s in first for s in question["must_contain"])
    if answered or wrong:
        return answered and not wrong, 1, used, over, wrong
    cut = READ_ON.search(first)
    if not cut or BUDGET - used < 100:
        return False, 1, used, over, wrong
    path, anchor, offset = cut.group(1), cut.group(2), int(cut.group(3))
    read = {"path": path, "offset": offset, "max_tokens": BUDGET - used}
    if anchor:
        read["anchor"] = anchor
    second = text_of(await session.call_tool("read_doc", read))
    over = over or tokens(second) > BUDGET - used
    used += tokens(second)
    both = first + second
    answered = all(s in both for s in question["must_contain"])
    return answered, 2, used, over, wrong


async def ask_by_pages(session, question):
    """The same question as agents asked it before sections: search_docs, then read_doc of the
    best hit, whole (the way the tools' descriptions used to suggest)."""
    args = {"query": question["question"], "limit": 10}
    if question.get("version"):
        args["version"] = question["version"]
    first = text_of(await session.call_tool("search_docs", args))
    used = tokens(first)
    try:
        hits = json.loads(first)["results"]
    except (ValueError, KeyError):
        hits = []
    if not hits:
        return False, 1, used, False, False
    page = text_of(await session.call_tool("read_doc", {"path": hits[0]["path"]}))
    used += tokens(page)
    wrong = version_violation(question, f"--- {hits[0]['path']} (")
    answered = all(s in page for s in question["must_contain"]) and not wrong
    return answered, 2, used, False, wrong


async def run(read, write, questions, agent=ask):
    rows = []
    async with ClientSession(read, write) as session:
        await session.initialize()
        for q in questions:
            rows.append(await agent(session, q))
    return rows


def report(name, questions, rows):
    n = len(rows)
    one = sum(1 for a, calls, *_ in rows if a and calls == 1)
    two = sum(1 for a, calls, used, *_ in rows if a and calls <= 2 and used <= BUDGET)
    over = sum(1 for *_, o, _ in rows if o)
    wrong = sum(1 for *_, w in rows if w)
    pinned = sum(1 for q in questions if q.get("version"))
    med = statistics.median(r[2] for r in rows)
    print(
        f"{name:6} answered in 1 call: {one}/{n} ({100 * one / n:.0f} %); within 2 calls and "
        f"{BUDGET} tokens: {two}/{n} ({100 * two / n:.0f} %); median {med:.0f} tokens; "
        f"over max_tokens: {over}; pinned to a version and answered from another: {wrong}/{pinned}"
    )
    for q, (a, calls, used, _, w) in zip(questions, rows):
        if not a:
            why = "another version" if w else "missed"
            print(f"         {why}: {q['question']} (wanted {q['page']}; {calls} call(s), {used} tokens)")
    # What the agent got: a failure's wording is the transport's own.
    return [(a, calls, used if a else None) for a, calls, used, *_ in rows]


def post(url, body):
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "accept": "application/json, text/event-stream"},
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read()


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.read()
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"{url}: {e.code} {e.read().decode()}") from None


def cost_of_search(base, questions, rounds=5):
    """Median time of search_docs over /mcp, of the same /api/search (ranked by section, as
    search_docs ranks), and of /api/search ranked by page, interleaved."""
    mcp, api, by_page = [], [], []
    for _ in range(rounds):
        for q in questions:
            args = {"query": q["question"], "limit": 10}
            params = {"q": q["question"], "limit": "10", "version": q.get("version") or "latest"}
            t0 = time.perf_counter()
            post(f"{base}/mcp?machine=bench", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                               "params": {"name": "search_docs", "arguments": args}})
            t1 = time.perf_counter()
            get(f"{base}/api/search?{urllib.parse.urlencode({**params, 'rank': 'section'})}")
            t2 = time.perf_counter()
            get(f"{base}/api/search?{urllib.parse.urlencode(params)}")
            t3 = time.perf_counter()
            mcp.append(t1 - t0)
            api.append(t2 - t1)
            by_page.append(t3 - t2)
    m, a, p = (statistics.median(x) * 1000 for x in (mcp, api, by_page))
    print(f"search_docs over /mcp: median {m:.2f} ms; the same /api/search (rank=section): "
          f"{a:.2f} ms; ratio {m / a:.2f}")
    print(f"ranking by section: /api/search rank=section {a:.2f} ms against rank=page {p:.2f} ms")


async def main(questions_path, base, dochub):
    questions = json.load(open(questions_path))
    async with streamable_http_client(f"{base}/mcp?machine=bench") as streams:
        http = await run(streams[0], streams[1], questions)
    params = StdioServerParameters(command=dochub, args=["mcp", "--machine", "bench", "--hub", base])
    async with stdio_client(params) as (read, write):
        stdio = await run(read, write, questions)
    a = report("/mcp", questions, http)
    b = report("stdio", questions, stdio)
    print("the two transports answered alike" if a == b else "THE TWO TRANSPORTS DIFFER")
    async with streamable_http_client(f"{base}/mcp?machine=bench") as streams:
        pages = await run(streams[0], streams[1], questions, ask_by_pages)
    n = len(pages)
    found = sum(1 for a, *_ in pages if a)
    within = sum(1 for a, _, used, *_ in pages if a and used <= BUDGET)
    med = statistics.median(r[2] for r in pages)
    print(
        f"by whole pages (search_docs, then read_doc of the best hit): answered {found}/{n} "
        f"({100 * found / n:.0f} %), within {BUDGET} tokens {within}/{n} ({100 * within / n:.0f} %); "
        f"median {med:.0f} tokens"
    )
    cost_of_search(base, questions)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
