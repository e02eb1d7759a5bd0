// libevent for the benchmarks' raw libevent floor. Like the library's CLibEvent shim: only
// <event2/...> headers here (system headers such as <sys/resource.h> would break the Glibc module).
#ifndef PORTRUNLOOP_CBENCHLIBEVENT_SHIM_H
#define PORTRUNLOOP_CBENCHLIBEVENT_SHIM_H

#include <event2/event.h>
#include <event2/thread.h>

#endif
