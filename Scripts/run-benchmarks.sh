#!/usr/bin/env bash
# Runs the full benchmark comparison (Benchmarks/, target PortRunLoopBenchmarks) twice — unpinned,
# then pinned to one CPU with `taskset -c 0` — and renders the table and the charts.
#
#   Scripts/run-benchmarks.sh [OUTPUT_DIR]
#
# OUTPUT_DIR (default Benchmarks/.results/<UTC timestamp>) receives:
#   machine.txt                  date, `uname -a`, nproc, CPU model
#   unpinned/Current_run.jmh.json, pinned/Current_run.jmh.json   raw results (JMH format)
#   unpinned.log, pinned.log     the benchmark tool's output
#   tables.md                    the tables and target ratios (Scripts/plot-benchmarks.py)
#   benchmarks-throughput.svg, benchmarks-roundtrip.svg          the charts
# With PORTRUNLOOP_BENCH_UPDATE_DOCS=1 the charts are also copied to Docs/.
#
# Needs: swift, python3 (standard library only), taskset (util-linux); installs libevent-dev, dbus,
# libdbus-1-dev, redis-server and libhiredis-dev if missing (the cross-process and bus-notification
# scenarios start a private dbus-daemon, the latter a private redis-server too). One run takes
# ~15 minutes on 2 vCPUs (the two runs ~31; ~5–6 of each are the server-shaped scenarios) after a
# ~5 minute first build. Wall-clock numbers on a
# shared VM are noisy: compare ratios within one run, not numbers across runs.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-"$root/Benchmarks/.results/$(date -u +%Y%m%d-%H%M%S)"}
mkdir -p "$out/unpinned" "$out/pinned"
out=$(cd "$out" && pwd)

{
    echo "$(date -u '+%Y-%m-%d %H:%M UTC') · $(nproc) vCPUs · $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//') · $(uname -sr)"
    echo "uname -a: $(uname -a)"
    echo "nproc: $(nproc)"
    echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
    echo "swift: $(swift --version 2>&1 | head -1)"
} > "$out/machine.txt"
cat "$out/machine.txt"

"$root/Scripts/install-deps.sh" dbus libdbus-1-dev redis-server libhiredis-dev
cd "$root/Benchmarks"
# The cross-process scenarios start this second process; it must sit beside the benchmark binary.
swift build -c release --product CrossProcessBenchPeer
run() { # label, then an optional command prefix (taskset)
    local label=$1; shift
    echo "== $label run =="
    "$@" swift package --allow-writing-to-directory "$out" benchmark --target PortRunLoopBenchmarks \
        --format jmh --path "$out/$label" --no-progress 2>&1 | tee "$out/$label.log" | grep -v '^\[' || true
    test -s "$out/$label/Current_run.jmh.json" || { echo "no results for the $label run" >&2; exit 1; }
}
# The first run also builds (unpinned, so the build uses both CPUs).
run unpinned
run pinned taskset -c 0

python3 "$root/Scripts/plot-benchmarks.py" \
    --run "unpinned=$out/unpinned/Current_run.jmh.json" --run "pinned=$out/pinned/Current_run.jmh.json" \
    --machine "$out/machine.txt" --svg-dir "$out" --markdown "$out/tables.md"
if [ "${PORTRUNLOOP_BENCH_UPDATE_DOCS:-0}" = 1 ]; then
    cp "$out/benchmarks-throughput.svg" "$out/benchmarks-roundtrip.svg" "$root/Docs/"
fi
echo "Results in $out (tables.md, *.svg)"
