#!/usr/bin/env bash
# Coverage-guided fuzzing of the decoders of outside bytes (PortRunLoopKit.docc/Reliability.md,
# "Fuzzing"): libFuzzer with AddressSanitizer (and LeakSanitizer) on each fuzz target.
#
#   Scripts/fuzz.sh TARGET [SECONDS]  builds TARGET (fuzz-cross-process-frame, fuzz-redis-payload,
#                                     fuzz-dbus-signal, fuzz-property-list, fuzz-match-rule,
#                                     fuzz-endpoint) with -sanitize=fuzzer,address in .build-fuzz and
#                                     runs it for SECONDS (default 60) from its committed seed corpus
#   Scripts/fuzz.sh all [SECONDS]     every target, one after another, SECONDS each
#   Scripts/fuzz.sh seeds             rewrites the committed seed corpora (Tests/Fuzz/Corpus) from
#                                     the targets' generators (normal build)
#
# New inputs libFuzzer finds go to .build-fuzz/corpus/TARGET, never into the committed corpus;
# the run's log is .build-fuzz/logs/TARGET.log. A crash, a broken invariant, a leak, an input
# taking more than FUZZ_TIMEOUT seconds (a hang) or more than FUZZ_RSS_MB of memory ends the run
# non-zero and prints the reproducer's path; replay it in the normal build with
# `swift run TARGET FILE`, or in the fuzz build with `.build-fuzz/release/TARGET FILE`.
# Each run prints one summary line: runs, seconds, libFuzzer's final cov: and ft:, corpus size.
#
# Environment: FUZZ_TIMEOUT (per input, default 10 s), FUZZ_RSS_MB (default 2048), FUZZ_MAX_LEN
# (default 4096 bytes), FUZZ_NICE (default 10), FUZZ_FLAGS (more libFuzzer flags, e.g. -jobs=2).
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(fuzz-cross-process-frame fuzz-redis-payload fuzz-dbus-signal fuzz-property-list fuzz-match-rule fuzz-endpoint)
scratch=.build-fuzz
build_flags=(-c release --scratch-path "$scratch" -Xswiftc -DFUZZING -Xswiftc -sanitize=fuzzer,address)

usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[ $# -ge 1 ] || usage

Scripts/install-deps.sh

if [ "$1" = seeds ]; then
  for target in "${targets[@]}"; do
    swift build --product "$target" 2>&1 | grep -E "error|warning: " | grep -v distributed-tracing || true
    "$(swift build --show-bin-path)/$target" --write-seeds "Tests/Fuzz/Corpus/$target"
  done
  exit 0
fi

seconds=${2:-60}
case "$1" in
  all) selected=("${targets[@]}") ;;
  fuzz-*) [[ " ${targets[*]} " == *" $1 "* ]] || usage; selected=("$1") ;;
  *) usage ;;
esac

export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=0:${ASAN_OPTIONS:-}"
export SWIFT_BACKTRACE=enable=no # the runtime's backtracer, run inside ASan, reports itself
export LSAN_OPTIONS="suppressions=$PWD/Scripts/lsan-suppressions.txt:print_suppressions=0"
mkdir -p "$scratch/logs"

start=$(date +%s)
for target in "${selected[@]}"; do
  echo "--- fuzz: building $target ($(( $(date +%s) - start )) s)"
  swift build "${build_flags[@]}" --product "$target" 2>&1 | grep -E "error|warning: |Compiling|Build" | grep -v "ld.gold: warning" || true
  bin="$scratch/release/$target"
  [ -x "$bin" ] || { echo "fuzz: $target did not build"; exit 1; }
done

failed=0
for target in "${selected[@]}"; do
  corpus="$scratch/corpus/$target"
  # Not "$scratch/artifacts": SwiftPM owns that directory of its scratch path and empties it when
  # it builds (another target's build, run beside this one, would take the reproducer's home).
  artifacts="$scratch/findings/$target/"
  log="$scratch/logs/$target.log"
  mkdir -p "$corpus" "$artifacts"
  echo "--- fuzz: $target for $seconds s ($(( $(date +%s) - start )) s)"
  status=0
  began=$(date +%s)
  # shellcheck disable=SC2086
  nice -n "${FUZZ_NICE:-10}" "$scratch/release/$target" "$corpus" "Tests/Fuzz/Corpus/$target" \
    -max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb="${FUZZ_RSS_MB:-2048}" \
    -max_len="${FUZZ_MAX_LEN:-4096}" -artifact_prefix="$artifacts" -print_final_stats=1 ${FUZZ_FLAGS:-} \
    > "$log" 2>&1 || status=$?
  took=$(( $(date +%s) - began ))
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1 || echo "?")
  cov=$(echo "$last" | grep -oE 'cov: [0-9]+' | grep -oE '[0-9]+' || echo "?")
  ft=$(echo "$last" | grep -oE 'ft: [0-9]+' | grep -oE '[0-9]+' || echo "?")
  size=$(find "$corpus" -type f | wc -l)
  echo "fuzz: $target: $runs runs in $took s, cov $cov, ft $ft, corpus $size new + $(find "Tests/Fuzz/Corpus/$target" -type f | wc -l) committed (exit $status)"
  if [ "$status" -ne 0 ]; then
    failed=1
    grep -E "ERROR: |SUMMARY: |invariant broken|Fatal error" "$log" | head -5 || true
    reproducer=$(grep -oE "Test unit written to [^ ]+" "$log" | tail -1 | sed 's/Test unit written to //')
    echo "fuzz: $target FAILED; log $log; reproducer ${reproducer:-none written}"
  fi
done
echo "--- fuzz: done ($(( $(date +%s) - start )) s)"
exit "$failed"
