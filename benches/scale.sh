#!/bin/sh
# Scale benchmark (not a test; figures depend on the machine): ranked search (a rare word, a
# common word, two letters, three words), docs pages and
# manifests over generated trees of 300 and 10,000 pages under the local host, loaded by wrk,
# answering from the content tree (SERVE_PREBUILT=0, "live"), from the prebuilt index in the
# copy the host makes at start as `spin up` does ("index"), and from the index with the folders
# mounted in place, `--direct-mounts`, where every answer checks its folders' times ("direct"). Beside each search it times `rg -i -F -l` for the same term over the same
# tree and prints the ratio rg time / p50. It also prints each tree's size and its index's
# build time and size.
#
# Needs wrk and ripgrep (Debian: apt-get install -y wrk ripgrep).
# The host runs in the dev profile (its dependencies optimised, as the tests run it);
# SCALE_PROFILE=release builds and runs it in release instead.
# SCALE_SHAPES (default "3x5x20 10x10x100"): projects x subprojects x pages per tree
# ("10x10x1000" for 100,000 pages).
# SCALE_MODES (default "live index direct"), SCALE_SECONDS (default 3) per route, SCALE_CONNECTIONS
# (default 4), SCALE_PORT (default 3918).
# SCALE_WASM_DIR: take every component's .wasm (api, docs, overview, health, hub) from this
# folder (e.g. built from an earlier commit, to measure "before") instead of this checkout's.
# SCALE_DOCHUB_BIN: build each tree's index with this `dochub` (e.g. an earlier commit's, whose
# components read only its own index format) instead of this checkout's.
# SCALE_SPIN_BIN: serve each tree with `$SCALE_SPIN_BIN up` (a real Spin) instead of dochub-host;
# same manifest and flags.
set -eu
cd "$(dirname "$0")/.."
for tool in wrk rg; do
    command -v "$tool" >/dev/null || { echo "benches/scale.sh needs $tool (apt-get install -y wrk ripgrep)" >&2; exit 1; }
done
shapes="${SCALE_SHAPES:-3x5x20 10x10x100}"
modes="${SCALE_MODES:-live index direct}"
seconds="${SCALE_SECONDS:-3}"
connections="${SCALE_CONNECTIONS:-4}"
port="${SCALE_PORT:-3918}"
profile="${SCALE_PROFILE:-dev}"

# Always the whole workspace: building one package alone unifies features differently and
# rebuilds wasmtime.
if [ "$profile" = release ]; then
    cargo build --quiet --workspace --release --bins --example corpus
    bin=target/release
else
    cargo build --quiet --workspace --bins --example corpus
    bin=target/debug
fi
cargo build --quiet --target wasm32-wasip2 --profile wasm -p api -p docs -p overview -p hub -p health
wasm="${SCALE_WASM_DIR:-$PWD/target/wasm32-wasip2/wasm}"

work="$(mktemp -d)"
pid=""
cleanup() {
    if [ -n "$pid" ]; then stop_host; fi
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

now_ns() { date +%s%N; }

# Spin runs its trigger as a child process, so `spin up` starts in a session (and process group)
# of its own and is stopped as a group.
stop_host() {
    if [ -n "$spin_bin" ]; then kill -- "-$pid" 2>/dev/null || true; else kill "$pid" 2>/dev/null || true; fi
    wait "$pid" 2>/dev/null || true
    pid=""
}

# Median wall time of `rg -i -F -l TERM TREE`, in ms, over 5 runs.
rg_ms() {
    for _ in 1 2 3 4 5; do
        t0=$(now_ns); rg -i -F -l -- "$1" "$2" >/dev/null || true; t1=$(now_ns)
        echo $(( (t1 - t0) / 1000 ))
    done | sort -n | sed -n 3p | awk '{ printf "%.2f", $1 / 1000 }'
}

# wrk's latency ("850.00us", "1.20ms", "2.01s") in ms.
to_ms() {
    echo "$1" | awk '/us$/ { sub(/us$/, ""); printf "%.3f", $0 / 1000; next }
                     /ms$/ { sub(/ms$/, ""); printf "%.3f", $0; next }
                     /s$/  { sub(/s$/, "");  printf "%.3f", $0 * 1000; next }'
}

# load PATH [RG_MS]: one line of figures.
load() {
    out="$(wrk -t1 -c"$connections" -d"${seconds}s" --latency "http://127.0.0.1:$port$1")"
    rps="$(echo "$out" | awk '/^Requests\/sec/ { print $2 }')"
    p50="$(echo "$out" | awk '$1 == "50%" { print $2 }')"
    p99="$(echo "$out" | awk '$1 == "99%" { print $2 }')"
    errors="$(echo "$out" | awk '/Non-2xx|Socket errors/ { printf "%s ", $0 }')"
    ratio=""
    if [ -n "${2:-}" ]; then
        # No p50 when no request finished within the run (a live scan of a large tree).
        ratio="$(awk -v rg="$2" -v p50="$(to_ms "${p50:-0}")" 'BEGIN { if (p50 > 0) printf "rg %s ms = %.1fx p50", rg, rg / p50; else printf "rg %s ms", rg }')"
    fi
    printf '  %-34s p50 %-9s p99 %-9s %8s req/s  %s%s\n' "$1" "$p50" "$p99" "$rps" "$ratio" "$errors"
}

spin_bin="${SCALE_SPIN_BIN:-}"
if [ -n "$spin_bin" ]; then
    echo "host: $spin_bin up ($("$spin_bin" --version)); components from $wasm"
else
    echo "host: $bin/dochub-host ($profile profile); components from $wasm"
fi
echo "$(wrk --version 2>&1 | head -n1 | cut -d' ' -f1-2), $connections connections, ${seconds}s per route, $(nproc) cores shared by host, wrk and rg"
for shape in $shapes; do
    p="${shape%%x*}"; rest="${shape#*x}"; s="${rest%%x*}"; k="${rest#*x}"
    tree="$work/$shape"
    "$bin/examples/corpus" "$tree/content" "$p" "$s" "$k" >/dev/null
    pages=$((p * s * k))
    echo
    echo "== $pages pages ($p projects x $s subprojects x $k pages): $(du -sm "$tree/content" | cut -f1) MB on disk"
    t0=$(now_ns)
    "${SCALE_DOCHUB_BIN:-$bin/dochub}" build "$tree/content" "$tree/build" | sed 's/^/  build: /'
    t1=$(now_ns)
    echo "  build time: $(( (t1 - t0) / 1000000 )) ms ($profile profile)"
    echo "  index on disk: $(du -sk "$tree/build/index" | cut -f1) KB; corpus: $(du -sk "$tree/content" | cut -f1) KB"
    sed -e "s|source = \"content\"|source = \"$tree/content\"|g" \
        -e "s|source = \"build\"|source = \"$tree/build\"|g" \
        -e "s|source = \"target/wasm32-wasip2/wasm/|source = \"$wasm/|g" \
        spin.toml > "$tree/spin.toml"
    rare_rg="$(rg_ms quasar "$tree/content")"
    common_rg="$(rg_ms service "$tree/content")"
    two_rg="$(rg_ms th "$tree/content")"
    three_rg="$(rg_ms "key value store" "$tree/content")"
    for mode in $modes; do
        set -- 
        if [ "$mode" = live ]; then set -- -e SERVE_PREBUILT=0; fi
        if [ "$mode" = direct ]; then set -- --direct-mounts; fi
        if [ -n "$spin_bin" ]; then
            setsid "$spin_bin" up -f "$tree/spin.toml" --listen "127.0.0.1:$port" \
                --state-dir "$tree/state" "$@" >"$tree/host-$mode.log" 2>&1 &
        else
            "$bin/dochub-host" --manifest "$tree/spin.toml" --listen "127.0.0.1:$port" \
                --state-dir "$tree/state" "$@" >"$tree/host-$mode.log" 2>&1 &
        fi
        pid=$!
        i=0
        until curl -sf -o /dev/null "http://127.0.0.1:$port/api/health"; do
            i=$((i + 1))
            if [ "$i" -gt 600 ]; then echo "host did not start:" >&2; cat "$tree/host-$mode.log" >&2; exit 1; fi
            sleep 0.1
        done
        echo "-- $mode"
        load "/api/search?q=quasar" "$rare_rg"
        load "/api/search?q=service" "$common_rg"
        load "/api/search?q=th" "$two_rg"
        load "/api/search?q=key%20value%20store" "$three_rg"
        load "/docs/search?q=quasar" "$rare_rg"
        load "/docs/p00/s00/page-0001"
        load "/docs/p00/s00/"
        load "/api/manifest"
        load "/api/manifest/p00/s00"
        stop_host
        if grep -q "warning" "$tree/host-$mode.log"; then
            echo "  (the host logged warnings:)"; grep "warning" "$tree/host-$mode.log" | sort | uniq -c | head -n 3
        fi
    done
done
