#!/bin/sh
# API benchmark (not a test; figures depend on the machine): the size of api.wasm, and
# requests/s of /api/health and /api/manifest (plus a raw page, a search and /overview/) under
# the local host, loaded by wrk from a second process; then each route's p50/p99 latency and
# its answers over 30 ms (a body held for the client's delayed ACK), from a client that times
# every request (benches/latency.py), since wrk's latencies disagree with its own counts. Run once on the
# bundled content with manifests generated per request, once with SERVE_PREBUILT. Each figure
# is also given as a share of the floor: what the same host answers for a component that does
# nothing but answer `200 ok` (benches/floor), measured first in the same run. The WASIp3 floor
# (benches/floor-p3: the same answer from a wasi:http@0.3 component, whose instances are reused)
# is measured beside it, as the floor a WASIp3 route would be held against, and so is health's
# own (benches/floor-probes: the host calls /api/health makes at every request, then the same
# answer), so that health's share of it is the part of its cost that is dochub's own work.
#
# Needs wrk (Debian: apt-get install -y wrk) and python3. API_BENCH_SECONDS (default 10) and
# API_BENCH_CONNECTIONS (default 16) change the load, API_BENCH_LATENCY_SECONDS (default 2) the
# latency run; API_BENCH_PORT (default 3917) the port.
# With SPIN_BIN=<spin>, every server (the floor's too) is `spin up` instead of the host, with
# the same flags; API_BENCH_PROFILE=release builds the host in release, as operators run it.
set -eu
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { echo "benches/api.sh needs wrk (apt-get install -y wrk)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "benches/api.sh needs python3" >&2; exit 1; }
seconds="${API_BENCH_SECONDS:-10}"
latency_seconds="${API_BENCH_LATENCY_SECONDS:-2}"
connections="${API_BENCH_CONNECTIONS:-16}"
port="${API_BENCH_PORT:-3917}"

profile="${API_BENCH_PROFILE:-debug}"
case "$profile" in
debug) cargo build --quiet -p dochub-host -p dochub-cli ;;
release) cargo build --quiet --release -p dochub-host && cargo build --quiet -p dochub-cli ;;
*) echo "API_BENCH_PROFILE is debug or release, not $profile" >&2; exit 2 ;;
esac
cargo build --quiet --target wasm32-wasip2 --profile wasm -p api -p docs -p overview -p hub -p health -p floor -p floor-p3 -p floor-probes
host="target/$profile/dochub-host"
spin="${SPIN_BIN:-}"
work="$(mktemp -d)"
pid=""
cleanup() {
    if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

echo "api.wasm: $(wc -c < target/wasm32-wasip2/wasm/api.wasm) bytes"
target/debug/dochub build content "$work/build"

# A copy of spin.toml in the work folder, with absolute component sources, beside a link to the
# content and this run's build: mounted from there, both are copied at start as `spin up` copies
# them by default (a source outside the app folder is refused). The api answers from a build it
# finds current unless SERVE_PREBUILT is 0, so the live variant sets 0 and the prebuilt
# variant 1.
ln -s "$PWD/content" "$work/content"
derive() {
    awk -v root="$PWD" -v prebuilt="$1" '
        /^\[/ { section = $0 }
        { gsub(/source = "target\//, "source = \"" root "/target/") }
        section == "[component.api]" && /^environment = / {
            $0 = "environment = { CONTENT_DIR = \"/content\", BUILD_DIR = \"/build\", SERVE_PREBUILT = \"" prebuilt "\" }"
        }
        { print }' spin.toml > "$work/spin-$1.toml"
}

floor=""
load() {
    out="$(wrk -t2 -c"$connections" -d"${seconds}s" "http://127.0.0.1:$port$1")"
    rps="$(echo "$out" | awk '/^Requests\/sec/ { print $2 }')"
    errors="$(echo "$out" | awk '/Non-2xx|Socket errors/ { printf "%s ", $0 }')"
    share=""
    if [ -n "$floor" ]; then share="$(awk -v r="$rps" -v f="$floor" 'BEGIN { printf "%5.1f %% of the floor", 100 * r / f }')"; fi
    if [ -n "${2:-}" ]; then share="$share, $(awk -v r="$rps" -v f="$2" 'BEGIN { printf "%5.1f %% of its probes'"'"' floor", 100 * r / f }')"; fi
    printf '  %-36s %9s req/s  %s %s\n' "$1" "$rps" "$share" "$errors"
    printf '  %-36s %s\n' "" "$(python3 benches/latency.py "$port" "$1" "$connections" "$latency_seconds")"
}

# Waits until the host started as $pid answers $1, or fails with its log ($2).
started() {
    i=0
    until curl -sf -o /dev/null "http://127.0.0.1:$port$1"; do
        i=$((i + 1))
        if [ "$i" -gt 300 ]; then echo "host did not start:" >&2; cat "$2" >&2; exit 1; fi
        sleep 0.1
    done
}

# serve MANIFEST NAME [FLAGS]: the host, or `spin up`, in the background as $pid.
serve() {
    manifest="$1" name="$2"
    shift 2
    if [ -n "$spin" ]; then
        "$spin" up -f "$manifest" --listen "127.0.0.1:$port" --state-dir "$work/state-$name" "$@" \
            >"$work/host-$name.log" 2>&1 &
    else
        "$host" --manifest "$manifest" --listen "127.0.0.1:$port" --state-dir "$work/state-$name" \
            "$@" >"$work/host-$name.log" 2>&1 &
    fi
    pid=$!
}
# Stops $pid; `spin up` runs its trigger as a child, which goes with it on SIGTERM.
stop() {
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
}

if [ -n "$spin" ]; then echo "server: $("$spin" --version)"; else echo "server: dochub-host ($profile)"; fi
serve benches/floor/spin.toml floor
started / "$work/host-floor.log"
echo "the floor (a component that answers 200 ok):"
load /
floor="$rps"
stop
serve benches/floor-p3/spin.toml floor-p3
started / "$work/host-floor-p3.log"
echo "the WASIp3 floor (the same answer from a wasi:http@0.3 component, instances reused):"
load /
stop
serve benches/floor-probes/spin.toml floor-probes
started / "$work/host-floor-probes.log"
echo "health's probes' floor (the host calls /api/health makes at every request, and nothing else):"
load /
probes_floor="$rps"
stop

for prebuilt in 0 1; do
    derive "$prebuilt"
    serve "$work/spin-$prebuilt.toml" "$prebuilt"
    started /api/health "$work/host-$prebuilt.log"
    if [ "$prebuilt" = 1 ]; then echo "SERVE_PREBUILT (manifests read from the build):"; else echo "live (manifests generated per request):"; fi
    echo "  $(wrk --version 2>&1 | head -n1 | cut -d' ' -f1-2), $connections connections, ${seconds}s per route, $(nproc) cores shared with the host"
    load /api/health "$probes_floor"
    load /api/manifest
    load /api/manifest/dochub/api
    load /api/raw/dochub/api/routes
    load "/api/search?q=manifest"
    load /overview/
    stop
done
