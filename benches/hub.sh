#!/bin/sh
# Hub benchmark: sends/s and inbox-read p50 under the local host on Spin's SQLite database and on
# PostgreSQL (127.0.0.1:5432; a fresh database, dropped afterwards), with 100 and with 100,000
# messages stored, the sends of a machine keeping 10,000 read messages and into an inbox of 9,000
# unread, and the size of hub.wasm; sends also as a share of the floor, the same
# requests answered by a component that does nothing (benches/floor), and of the store's
# ceiling, the commits/s the same database takes from as many writers committing one row each
# (what the disk's syncs allow). Not a test: figures depend on the machine.
# HUB_BENCH_BIG=<n> changes the 100,000; HUB_BENCH_PG=0 skips PostgreSQL.
# `benches/hub.sh wait`: wake latency of long-polls, the cost of 100 idle waiters (arriving at
# once, then 20 ms apart), and send p50
# with them held (tests/examples/hub_wait_bench.rs).
# `benches/hub.sh search`: mailbox search p50 in mailboxes of 2,000 and 20,000 messages
# (tests/examples/hub_search_bench.rs). With SPIN_BIN=<spin>, both run under `spin up`.
# HUB_BENCH_PROFILE=release builds the benches, and with them the host they run, in release, as
# operators run it: a debug host's floor is several times lower, which inflates every share of
# it (the figures to hold against benches/api.sh's release floor).
set -eu
cd "$(dirname "$0")/.."
profile="${HUB_BENCH_PROFILE:-debug}"
# Built with the whole workspace's features, as the tests are, so nothing is rebuilt for it.
case "$profile" in
debug) cargo build --quiet --workspace --examples ;;
release) cargo build --quiet --release --workspace --examples ;;
*) echo "HUB_BENCH_PROFILE is debug or release, not $profile" >&2; exit 2 ;;
esac
bin="${CARGO_TARGET_DIR:-target}/$profile/examples"
if [ "${1:-}" = wait ]; then
    exec "$bin/hub_wait_bench"
fi
if [ "${1:-}" = search ]; then
    exec "$bin/hub_search_bench"
fi
exec "$bin/hub_bench"
