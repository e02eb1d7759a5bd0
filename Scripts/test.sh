#!/usr/bin/env bash
# The README's second command: installs what is missing, builds everything with warnings as
# errors (Swift 6 mode), and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh
swift build --build-tests -Xswiftc -warnings-as-errors
# One test at a time. Many tests block their thread while a loop thread or another process
# answers (performAndWait, a child's line on a pipe, a server's reply), and a blocked test holds a
# thread of Swift's cooperative pool, which has one thread per CPU. Side by side on a 2-vCPU
# machine two of them can hold the whole pool, and the async tests waiting behind them hit their
# time limits. Serially the suite takes about 100 s.
swift test --skip-build --no-parallel
