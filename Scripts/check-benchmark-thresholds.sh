#!/usr/bin/env bash
# CI guard: runs the PortRunLoopGuards benchmarks (Benchmarks/) and checks allocation
# and wake-signal counts of our hot paths against Benchmarks/Thresholds/guards.json. Wall clock is
# deliberately not guarded (it swings run to run on a shared VM); counts are.
#
#   Scripts/check-benchmark-thresholds.sh
#
# Needs swift and python3 (standard library only); installs the apt packages the benchmark package
# links if they are missing: libevent-dev (the library and the libevent floor), libdbus-1-dev
# (the D-Bus floor of the cross-process scenarios, in the same C target) and libhiredis-dev (the
# Redis floor of the bus-notification scenarios, same target). The benchmark
# package's malloc counting comes from ordo-one/benchmark's malloc interposer (Swift 6.3), which
# needs no system package (libjemalloc-dev is only needed by Swift <= 6.2 toolchains).
#
# Cost on 2 vCPUs from a clean checkout (no Benchmarks/.build): resolve + build (the benchmark plugin
# builds every target of the package, SwiftNIO included) + about a minute of runs: 3–5 minutes
# (Docs/Benchmarks.md, "CI guard"). Exit status 0 when
# every guard holds; 1 otherwise, or when the benchmarks could not be built or run.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/portrunloop-guards.XXXXXX")
trap 'rm -rf "$out"' EXIT

"$root/Scripts/install-deps.sh" libdbus-1-dev libhiredis-dev
cd "$root/Benchmarks"
start=$(date +%s)
if ! swift package --allow-writing-to-directory "$out" benchmark --target PortRunLoopGuards \
        --format jmh --path "$out" --no-progress > "$out/benchmark.log" 2>&1; then
    tail -n 60 "$out/benchmark.log" >&2
    echo "check-benchmark-thresholds: building or running the guard benchmarks failed" >&2
    exit 1
fi
results="$out/Current_run.jmh.json"
if [ ! -s "$results" ]; then
    tail -n 60 "$out/benchmark.log" >&2
    echo "check-benchmark-thresholds: no results written" >&2
    exit 1
fi
echo "benchmark guards: built and ran in $(( $(date +%s) - start ))s"
python3 "$root/Benchmarks/Thresholds/check-thresholds.py" "$root/Benchmarks/Thresholds/guards.json" "$results"
