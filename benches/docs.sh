#!/bin/sh
# Docs benchmark: p50/p90/p99 of rendering a 20 KB markdown page in the full layout under the
# local host, the same for its raw markdown (the difference is the rendering), docs.wasm size.
# Not a test: figures depend on the machine. DOCS_BENCH_REQUESTS=<n> changes the 300 requests.
set -eu
cd "$(dirname "$0")/.."
# Built with the whole workspace's features, as the tests are, so nothing is rebuilt for it.
cargo build --quiet --workspace --examples
exec "${CARGO_TARGET_DIR:-target}/debug/examples/docs_bench"
