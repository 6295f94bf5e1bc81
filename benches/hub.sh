#!/bin/sh
# Hub benchmark: sends/s and inbox-read p50 under the local host with the SQLite store and with
# Redis (127.0.0.1:6379), inbox-read p50 with 100 and with 100,000 messages stored, hub.wasm size.
# Not a test: figures depend on the machine. HUB_BENCH_BIG=<n> changes the 100,000;
# HUB_BENCH_REDIS=0 skips Redis.
set -eu
cd "$(dirname "$0")/.."
exec cargo run --quiet -p dochub-tests --example hub_bench
