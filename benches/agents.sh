#!/bin/sh
# Agents benchmark (not a test): how many questions an agent gets answered from real docs in
# one or two MCP calls within 2,000 tokens, over stdio (`dochub mcp`) and over `/mcp`, and what
# a `search_docs` call over `/mcp` costs next to the same `/api/search` (`rank=section`, as
# search_docs ranks; and ranked by page, for what ranking by section costs). The question sets,
# written from the docs before any tuning, are benches/agents/questions/<corpus>.json: each
# question names the page that answers it and the strings an answer must hold; some are pinned
# to a version and must never be answered from another. The corpora are the relevance
# benchmark's (benches/relevance.sh), converted the same way:
#   spin    the Spin docs, four versions (RELEVANCE_DOCS, a spinframework/spin-docs checkout)
#   mdbook  the mdBook guide (RELEVANCE_MDBOOK, a rust-lang/mdBook checkout)
#
#   sh benches/agents.sh [spin|mdbook]      (spin when not given)
#
# Needs node (the converters) and the official Python MCP SDK: AGENTS_PYTHON, a python3 with
# `mcp` installed (.ci/run makes one, with the version the tests pin). AGENTS_PORT (default
# 3919).
set -eu
cd "$(dirname "$0")/.."

corpus="${1:-spin}"
case "$corpus" in
spin) var=RELEVANCE_DOCS ;;
mdbook) var=RELEVANCE_MDBOOK ;;
*) echo "usage: sh benches/agents.sh [spin|mdbook]" >&2; exit 2 ;;
esac
eval "checkout=\${$var:-}"
[ -n "$checkout" ] || { echo "benches/agents.sh $corpus needs $var (see benches/relevance.sh)" >&2; exit 1; }
python="${AGENTS_PYTHON:-python3}"
"$python" -c 'import mcp' 2>/dev/null || { echo "benches/agents.sh needs AGENTS_PYTHON, a python3 with the mcp package" >&2; exit 1; }
port="${AGENTS_PORT:-3919}"

cargo build --quiet --workspace --bins
cargo build --quiet --target wasm32-wasip2 --profile wasm -p api -p mcp
work="$(mktemp -d)"
pid=""
cleanup() {
    [ -z "$pid" ] || { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

case "$corpus" in
spin)
    node benches/relevance/convert-spin.mjs "$checkout" "$work/content"
    # The versions, newest first, so that an unpinned question is answered from v4 alone.
    versions=$(ls "$work/content/spin" | grep -E '^v[0-9]+$' | sort -t v -k 2 -n -r | paste -sd, - | sed 's/,/, /g')
    echo "versions: [$versions]" >>"$work/content/spin/_project.yaml"
    ;;
mdbook) node benches/relevance/convert-mdbook.mjs "$checkout/guide/src" "$work/content" mdbook guide "mdBook Documentation" ;;
esac
target/debug/dochub build "$work/content" "$work/build" >/dev/null
# The app's own manifest, its components taken from this checkout's build.
sed "s|source = \"target/|source = \"$PWD/target/|" spin.toml >"$work/spin.toml"
target/debug/dochub-host -f "$work/spin.toml" --listen "127.0.0.1:$port" --state-dir "$work/state" \
    >"$work/host.log" 2>&1 &
pid=$!
base="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
    curl -fsS "$base/api/health" >/dev/null 2>&1 && break
    sleep 0.2
done
echo "corpus $corpus: $(curl -fsS "$base/api/manifest" | "$python" -c 'import json,sys; print(json.load(sys.stdin)["total_documents"])') pages"
"$python" benches/agents/run.py "benches/agents/questions/$corpus.json" "$base" "$PWD/target/debug/dochub"
