#!/usr/bin/env bash
# Soak: every feature of the package at once for a chosen time (default 30 minutes), with every
# promised delivery checked and the process's memory, descriptors and threads followed; exits
# non-zero if anything was lost, if descriptors grew, or if resident memory kept growing (see
# Reliability.md, "Soak").
#
#   Scripts/soak.sh [duration] [portrunloop-soak options...]     e.g. Scripts/soak.sh 30m, Scripts/soak.sh 2h --json
#
# Installs what is missing (Scripts/install-deps.sh: libevent, libdbus-1 and hiredis headers,
# dbus-daemon, redis-server), builds portrunloop-soak in release (scratch path .build-soak, or
# $SCRATCH) and runs it. The soak starts its own dbus-daemon and redis-server on a Unix socket and
# a random loopback port, never the system's; they, and its peer process, die with it.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-30m}
[ $# -gt 0 ] && shift
scratch=${SCRATCH:-.build-soak}
Scripts/install-deps.sh
swift build -c release --scratch-path "$scratch" --product portrunloop-soak
bin="$(swift build -c release --scratch-path "$scratch" --show-bin-path)"
exec "$bin/portrunloop-soak" --duration "$duration" "$@"
