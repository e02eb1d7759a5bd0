#!/usr/bin/env bash
# The stress suite under AddressSanitizer, with LeakSanitizer on.
#
#  1. builds the package and its tests with --sanitize=address (scratch path .build-rel-asan),
#  2. proves LeakSanitizer still catches a leak of ours despite the suppressions,
#  3. runs portrunloop-stress (all chaos, notifications) for STRESS_SECONDS (default 60),
#  4. runs the reliability tests (stress, model, misuse) with `swift test --sanitize=address`.
#
# Scripts/lsan-suppressions.txt suppresses exactly the XCTest runner's own two leaked objects;
# nothing else. Exits non-zero on any ASan/LSan report, any stress violation or test failure.
# Environment: STRESS_SECONDS, PORTRUNLOOP_STRESS_SEED (replay), SCRATCH (default .build-rel-asan).
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=${SCRATCH:-.build-rel-asan}
seconds=${STRESS_SECONDS:-60}
start=$(date +%s)
elapsed() { echo "$(( $(date +%s) - start ))s"; }

export LSAN_OPTIONS="suppressions=$PWD/Scripts/lsan-suppressions.txt:print_suppressions=1"
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=0"

echo "--- stress-asan: building with --sanitize=address ($scratch)"
swift build --build-tests --scratch-path "$scratch" --sanitize=address
bin="$(swift build --scratch-path "$scratch" --sanitize=address --show-bin-path)"

echo "--- stress-asan: LeakSanitizer must still catch our own leaks ($(elapsed))"
if "$bin/portrunloop-stress" --self-test-leak > /tmp/stress-asan-selftest.$$ 2>&1; then
  cat /tmp/stress-asan-selftest.$$
  rm -f /tmp/stress-asan-selftest.$$
  echo "stress-asan: FAIL — a deliberate 4242-byte leak was not reported (leak detection is off?)"
  exit 1
fi
grep -q "4242 byte(s) leaked" /tmp/stress-asan-selftest.$$ || { cat /tmp/stress-asan-selftest.$$; echo "stress-asan: FAIL — unexpected self-test output"; exit 1; }
rm -f /tmp/stress-asan-selftest.$$
echo "ok: the deliberate leak was reported"

echo "--- stress-asan: portrunloop-stress for ${seconds}s under ASan ($(elapsed))"
"$bin/portrunloop-stress" --duration "$seconds" --items 2000 --quiet

echo "--- stress-asan: reliability tests under ASan ($(elapsed))"
swift test --skip-build --scratch-path "$scratch" --sanitize=address \
  --filter 'StressTests|ModelTests|ModelRegressionTests|PortMisuseTests|TimerMisuseTests|LoopMisuseTests|PerformAndWaitMisuseTests|FileDescriptorMisuseTests|LoopTeardownTests|NotificationMisuseTests|RunLoopThreadStopRuleTests'

echo "stress-asan: PASS ($(elapsed))"
