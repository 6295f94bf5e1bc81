#!/bin/sh
# Relevance benchmark (not a test): how well dochub's search finds the page that answers a
# reader, next to three common docs-site engines on the same pages: MiniSearch with
# VitePress's local search options, lunr with MkDocs's title boost, and Pagefind. Three real
# docs corpora, each converted to a dochub tree:
#   spin    the Spin docs (spinframework/spin-docs, content/v1..vN), one subproject per docs
#           version; an answer counts in any version;
#   cargo   the Cargo book (rust-lang/cargo, doc/book/src), an mdBook of about 100 chapters;
#   mdbook  the mdBook guide (rust-lang/mdBook, guide/src), a user guide of about 30 chapters.
# benches/relevance/queries/<corpus>.json holds the queries and the pages judged to answer
# each. Prints per engine success@5 and MRR@10, each query's first answering rank, the
# excerpts that show markdown syntax, and how many queries dochub's prebuilt index answered
# differently from its live search (should be 0).
#
#   sh benches/relevance.sh [spin|cargo|mdbook|spin-questions|mdbook-questions]   (spin when not given)
#
# Each corpus is read from a checkout named by its variable: RELEVANCE_DOCS (spin),
# RELEVANCE_CARGO, RELEVANCE_MDBOOK; run without it to be told how to get it.
# Needs node and npm (the peers are pinned in benches/relevance/package-lock.json).
set -eu
cd "$(dirname "$0")/.."

corpus="${1:-spin}"
# `<corpus>-questions`: the same pages, asked with the agents benchmark's questions (each typed
# as a question, written from the docs before any tuning; those pinned to a version left out).
queries_name="$corpus"
corpus="${corpus%-questions}"
# Per corpus: the repository, the commit the figures were taken at, the checkout's variable.
case "$corpus" in
spin)
    repo=https://github.com/spinframework/spin-docs
    commit=e76181b1dca90381a590124cdd9d3dc11a4615f1
    var=RELEVANCE_DOCS
    ;;
cargo)
    repo=https://github.com/rust-lang/cargo
    commit=af373f761aa4e42b093c2e453078fd73c8ce54dd
    var=RELEVANCE_CARGO
    ;;
mdbook)
    repo=https://github.com/rust-lang/mdBook
    commit=641d06abe7d10d981ed61dd2711a30e4119666cd
    var=RELEVANCE_MDBOOK
    ;;
*)
    echo "usage: sh benches/relevance.sh [spin|cargo|mdbook][-questions]" >&2
    exit 2
    ;;
esac
eval "checkout=\${$var:-}"
if [ -z "$checkout" ]; then
    name="$(basename "$repo")"
    cat >&2 <<EOF
benches/relevance.sh $corpus needs $var, a checkout of $repo:
    git clone $repo
    git -C $name checkout $commit   # the commit the figures were taken at
    $var=\$PWD/$name sh benches/relevance.sh $corpus
EOF
    exit 1
fi
for tool in node npm; do
    command -v "$tool" >/dev/null || { echo "benches/relevance.sh needs $tool" >&2; exit 1; }
done
at="$(git -C "$checkout" rev-parse HEAD 2>/dev/null || echo unknown)"
[ "$at" = "$commit" ] || echo "note: $checkout is at $at, the figures were taken at $commit" >&2

bench=benches/relevance
[ -d "$bench/node_modules" ] || (cd "$bench" && npm ci --silent)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT INT TERM

case "$corpus" in
spin)
    [ -d "$checkout/content" ] || { echo "$checkout has no content/ folder; is it a spin-docs checkout?" >&2; exit 1; }
    node "$bench/convert-spin.mjs" "$checkout" "$work/content"
    ;;
cargo) node "$bench/convert-mdbook.mjs" "$checkout/doc/book/src" "$work/content" cargo book "The Cargo Book" ;;
mdbook) node "$bench/convert-mdbook.mjs" "$checkout/guide/src" "$work/content" mdbook guide "mdBook Documentation" ;;
esac
queries="$bench/queries/$queries_name.json"

# Always the whole workspace: building one package alone unifies features differently and
# rebuilds a lot.
cargo build --quiet --workspace --example search_queries
"${CARGO_TARGET_DIR:-target}/debug/examples/search_queries" "$work/content" "$queries" >"$work/dochub.jsonl"
node "$bench/peers.mjs" "$work/content" "$queries" >"$work/peers.jsonl"

echo
node "$bench/score.mjs" "$queries" "$work/dochub.jsonl" "$work/peers.jsonl"
