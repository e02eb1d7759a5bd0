// The only C header PortRunLoopKit sees. Keep it to <event2/...> headers:
// pulling system headers such as <sys/resource.h> in here breaks the Glibc
// module for every file that imports both.
#ifndef PORTRUNLOOP_CLIBEVENT_SHIM_H
#define PORTRUNLOOP_CLIBEVENT_SHIM_H

#include <event2/event.h>
#include <event2/thread.h>
#include <event2/util.h>

#endif
