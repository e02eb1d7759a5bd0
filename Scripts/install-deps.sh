#!/usr/bin/env bash
# Installs what building PortRunLoop needs on Debian/Ubuntu (libevent's, libdbus-1's and hiredis'
# headers, pkg-config, dbus-daemon/dbus-send/dbus-monitor for the D-Bus tests,
# redis-server/redis-cli and stunnel4 for the Redis tests, and OpenSSL's headers, openssl and curl for the TLS
# tests),
# plus any extra apt packages named as arguments (e.g. valgrind, libjemalloc-dev). Idempotent:
# installs nothing that is already there.
set -euo pipefail

want=()
pkg-config --exists libevent_pthreads 2>/dev/null || want+=(libevent-dev)
command -v pkg-config >/dev/null 2>&1 || want+=(pkg-config)
# PortRunLoopDBus: libdbus-1's headers, and the daemon and tools its tests start (dbus-daemon,
# dbus-send, dbus-monitor).
pkg-config --exists dbus-1 2>/dev/null || want+=(libdbus-1-dev)
command -v dbus-daemon >/dev/null 2>&1 && command -v dbus-send >/dev/null 2>&1 || want+=(dbus)
# gdbus, with which the D-Bus tests emit signals of types dbus-send cannot write.
command -v gdbus >/dev/null 2>&1 || want+=(libglib2.0-bin)
# PortRunLoopRedis: hiredis' headers, and the server and client its tests start (redis-server,
# redis-cli; the tests run their own server on a random loopback port, never the system one).
pkg-config --exists hiredis 2>/dev/null || want+=(libhiredis-dev)
command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 || want+=(redis-server redis-tools)
# stunnel, the TLS tunnel the Redis tests run between a center and a server that speaks only TLS
# (hiredis 0.14 has no TLS: PortRunLoopRedis.docc/RedisNotifications.md, "Encrypted links").
command -v stunnel4 >/dev/null 2>&1 || want+=(stunnel4)
# PortRunLoopTLS: OpenSSL's headers, and the tools its tests run as peers (openssl s_server and
# s_client, curl).
pkg-config --exists openssl 2>/dev/null || want+=(libssl-dev)
command -v openssl >/dev/null 2>&1 || want+=(openssl)
command -v curl >/dev/null 2>&1 || want+=(curl)
for extra in "$@"; do
  dpkg-query -W -f='${Status}' "$extra" 2>/dev/null | grep -q "install ok installed" || want+=("$extra")
done
[ ${#want[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${want[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
