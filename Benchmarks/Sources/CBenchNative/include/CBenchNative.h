// The module's umbrella header: every header of the target, listed. Listing them (rather than
// letting the include directory be the umbrella) makes a new header change this file, so clang's
// module cache notices it on an incremental build instead of serving a stale module without it.
#ifndef PORTRUNLOOP_CBENCHNATIVE_H
#define PORTRUNLOOP_CBENCHNATIVE_H

#include "cbench_bufferevent_echo.h"
#include "cbench_bus_dbus.h"
#include "cbench_bus_redis.h"
#include "cbench_clock.h"
#include "cbench_dbus.h"
#include "cbench_echo_load.h"
#include "cbench_epoll_ping_pong.h"
#include "cbench_libevent_ping_pong.h"
#include "cbench_libevent_timer_churn.h"
#include "cbench_libevent_timer_lateness.h"
#include "cbench_seqpacket.h"
#include "cbench_sockets.h"

#endif
