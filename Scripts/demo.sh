#!/usr/bin/env bash
# The README's first command: installs what is missing, builds the demo (release) and runs it.
# Options are passed through: Scripts/demo.sh --threads 8 --items 20000 --queue-limit 1
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh
swift build -c release --product portrunloop-demo
exec .build/release/portrunloop-demo "$@"
