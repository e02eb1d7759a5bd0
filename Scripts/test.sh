#!/usr/bin/env bash
# The README's second command: installs what is missing, builds everything with warnings as
# errors (Swift 6 mode), and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh
swift build --build-tests -Xswiftc -warnings-as-errors
swift test --skip-build
