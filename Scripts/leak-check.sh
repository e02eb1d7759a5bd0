#!/usr/bin/env bash
# Leak check: the demo and the stress tool under valgrind memcheck must show 0
# definitely-lost bytes and 0 memory errors.
#
#  1. builds portrunloop-demo and portrunloop-stress (debug, scratch path .build-rel),
#  2. proves the check works: a deliberate 4242-byte leak must be reported as definitely lost,
#  3. runs the demo (its in-process scenarios) and a stress run with chaos and notifications under
#     memcheck. The scenarios that start a second process (--no-cross-process, --no-bus) are left
#     out: under valgrind, Foundation's `Process.run` fails with EBADF (it closes the descriptors it
#     lists in /proc/self/fd, which include valgrind's own) and reads uninitialised bytes doing so.
#
# Threads that exit and loops that shut down during the stress run must free everything: a leaked
# loop, port, timer, fd source or observer shows up as definitely (or indirectly) lost.
# Environment: DEMO_ARGS (default "--threads 2 --items 200 --no-cross-process --no-bus"), STRESS_SECONDS (default 30),
# SCRATCH (default .build-rel), PORTRUNLOOP_STRESS_SEED (replay).
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=${SCRATCH:-.build-rel}
demo_args=${DEMO_ARGS:---threads 2 --items 200 --no-cross-process --no-bus}
seconds=${STRESS_SECONDS:-30}
start=$(date +%s)
elapsed() { echo "$(( $(date +%s) - start ))s"; }
command -v valgrind > /dev/null || { echo "leak-check: valgrind is not installed (apt-get install valgrind)"; exit 1; }

echo "--- leak-check: building ($scratch)"
swift build --scratch-path "$scratch" --product portrunloop-demo
swift build --scratch-path "$scratch" --product portrunloop-stress
bin="$(swift build --scratch-path "$scratch" --show-bin-path)"

logdir=$(mktemp -d)
trap 'rm -rf "$logdir"' EXIT
status=0

# memcheck NAME EXPECTED_DEFINITE ARGS...: runs ARGS under memcheck, prints the leak summary and
# checks the definitely-lost byte count and the error count.
memcheck() {
  local name=$1 expected=$2
  shift 2
  local log="$logdir/$name.log"
  echo "--- leak-check: $name: $* ($(elapsed))"
  # --error-exitcode is not used: the program's own exit status is checked separately.
  local rc=0
  # --fair-sched=yes: valgrind runs one thread at a time; with its default lock a thread that
  # spins (the demo's teardown poster) can starve the thread it waits for for minutes.
  valgrind --tool=memcheck --fair-sched=yes --leak-check=full --show-leak-kinds=definite,indirect \
    --suppressions=Scripts/valgrind-suppressions.supp \
    --errors-for-leak-kinds=definite --num-callers=30 --log-file="$log" "$@" > "$logdir/$name.out" 2>&1 || rc=$?
  tail -n 9 "$logdir/$name.out"
  local definite errors
  definite=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' "$log" | tr -d , | tail -1)
  definite=${definite:-0}
  errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9,]*\) errors.*/\1/p' "$log" | tr -d , | tail -1)
  grep -E "definitely lost|indirectly lost|possibly lost|ERROR SUMMARY" "$log" | sed 's/^==[0-9]*== /    /'
  if [ "$expected" = "0" ]; then
    if [ "$definite" != "0" ] || [ "${errors:-0}" != "0" ] || [ "$rc" != "0" ]; then
      echo "leak-check: FAIL — $name: definitely lost $definite bytes, $errors memcheck errors, exit status $rc"
      grep -B2 -A30 "definitely lost in loss record" "$log" | head -80 || true
      status=1
    fi
  elif [ "$definite" != "$expected" ]; then
    echo "leak-check: FAIL — $name: expected $expected definitely-lost bytes, memcheck saw $definite (is the check blind?)"
    status=1
  fi
}

memcheck self-test 4242 "$bin/portrunloop-stress" --self-test-leak
memcheck demo 0 "$bin/portrunloop-demo" $demo_args
memcheck stress 0 "$bin/portrunloop-stress" --duration "$seconds" --items 1500 --quiet --round-timeout 900

if [ "$status" = "0" ]; then echo "leak-check: PASS ($(elapsed))"; else echo "leak-check: FAIL ($(elapsed))"; fi
exit $status
