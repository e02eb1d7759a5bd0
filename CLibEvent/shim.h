// The only C header PortRunLoopKit sees. Keep it to <event2/...> headers:
// pulling system headers such as <sys/resource.h> in here breaks the Glibc
// module for every file that imports both.
#ifndef PORTRUNLOOP_CLIBEVENT_SHIM_H
#define PORTRUNLOOP_CLIBEVENT_SHIM_H

// libevent's installed event-config.h defines _GNU_SOURCE before its headers
// include <sys/types.h>, so clang would build this module's copies of the
// textual glibc headers with __USE_XOPEN while Glibc and Dispatch build theirs
// without it: two different `fd_set`s (`fds_bits` vs `__fds_bits`) and an ODR
// error in every Swift file that imports Foundation too. Read event-config.h
// first (it is include-guarded), then drop the macro so the system headers
// below are seen exactly as Glibc's module sees them. The declarations we use
// do not depend on it.
#include <event2/event-config.h>
#ifdef _GNU_SOURCE
#undef _GNU_SOURCE
#endif

#include <event2/event.h>
#include <event2/thread.h>
#include <event2/util.h>

#endif
