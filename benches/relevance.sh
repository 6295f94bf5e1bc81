#!/bin/sh
# Relevance benchmark (not a test): how well dochub's search finds the page that answers a
# reader, next to two common docs-site engines on the same pages: MiniSearch with VitePress's
# local search options and lunr with MkDocs's title boost. The pages are the Spin docs
# (spinframework/spin-docs, content/v1..vN), converted to a dochub tree, one subproject per
# docs version. benches/relevance/queries.json holds the queries and the pages judged to
# answer each; an answer counts in any version. Prints per engine success@5 and MRR@10, each
# query's first answering rank, and how many queries dochub's prebuilt index answered
# differently from its live search (should be 0).
#
# RELEVANCE_DOCS (required): a checkout of https://github.com/spinframework/spin-docs.
# Needs node and npm (the peers are pinned in benches/relevance/package-lock.json).
set -eu
cd "$(dirname "$0")/.."

# The spin-docs commit the figures were taken at.
docs_commit=e76181b1dca90381a590124cdd9d3dc11a4615f1
if [ -z "${RELEVANCE_DOCS:-}" ]; then
    cat >&2 <<EOF
benches/relevance.sh needs RELEVANCE_DOCS, a checkout of the Spin docs:
    git clone https://github.com/spinframework/spin-docs
    git -C spin-docs checkout $docs_commit   # the commit the figures were taken at
    RELEVANCE_DOCS=\$PWD/spin-docs sh benches/relevance.sh
EOF
    exit 1
fi
[ -d "$RELEVANCE_DOCS/content" ] || { echo "$RELEVANCE_DOCS has no content/ folder; is it a spin-docs checkout?" >&2; exit 1; }
for tool in node npm; do
    command -v "$tool" >/dev/null || { echo "benches/relevance.sh needs $tool" >&2; exit 1; }
done

bench=benches/relevance
[ -d "$bench/node_modules" ] || (cd "$bench" && npm ci --silent)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT INT TERM

node "$bench/convert.mjs" "$RELEVANCE_DOCS" "$work/content"

# Always the whole workspace: building one package alone unifies features differently and
# rebuilds a lot.
cargo build --quiet --workspace --example search_queries
"${CARGO_TARGET_DIR:-target}/debug/examples/search_queries" "$work/content" "$bench/queries.json" >"$work/dochub.jsonl"
node "$bench/peers.mjs" "$work/content" "$bench/queries.json" >"$work/peers.jsonl"

echo
node "$bench/score.mjs" "$bench/queries.json" "$work/dochub.jsonl" "$work/peers.jsonl"
