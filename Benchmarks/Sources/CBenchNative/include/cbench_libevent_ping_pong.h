// The libevent floor of the fd ping-pong: a bare event_base (EVENT_BASE_FLAG_NOLOCK, as
// PortRunLoop's own bases) with two persistent EV_READ events on the ends of a non-blocking
// AF_UNIX socketpair, and optionally idle events that never fire: persistent EV_READ events on
// descriptors the caller owns, or timers an hour away. One byte is in flight, as in the epoll floor.
// No system headers: see cbench_sockets.h.
#ifndef PORTRUNLOOP_CBENCH_LIBEVENT_PING_PONG_H
#define PORTRUNLOOP_CBENCH_LIBEVENT_PING_PONG_H

/// An event base, the socketpair's two events and the idle events.
/// Thread-safety: create, use and destroy it on one thread at a time.
typedef struct cbench_libevent_ping_pong cbench_libevent_ping_pong;

/// Makes the base, the socketpair and its two events. NULL on failure.
/// Thread-safety: any thread.
cbench_libevent_ping_pong *cbench_libevent_ping_pong_create(void);

/// Adds a persistent EV_READ event for each of `fds[0..<count]` (descriptors that never become
/// readable; the caller keeps owning them and closes them after destroy). Returns how many were
/// added (fewer only if libevent refused one). Thread-safety: the owning thread.
long cbench_libevent_ping_pong_add_idle_fds(cbench_libevent_ping_pong *ping_pong, const int *fds, long count);

/// Adds `count` timers that fire `seconds` from now (and do nothing). Returns how many were added.
/// Thread-safety: the owning thread.
long cbench_libevent_ping_pong_add_idle_timers(cbench_libevent_ping_pong *ping_pong, long count, long seconds);

/// Writes one byte and runs the base until `events` were handled, or until CLOCK_MONOTONIC passes
/// `deadline_ns` (checked every 64 events; 0: no deadline). The last event writes nothing back.
/// Returns the events handled, or -1. Thread-safety: the owning thread.
long cbench_libevent_ping_pong_run(cbench_libevent_ping_pong *ping_pong, long events, long long deadline_ns);

/// Frees every event, the base, and closes the socketpair (not the idle descriptors).
/// Thread-safety: the owning thread, once.
void cbench_libevent_ping_pong_destroy(cbench_libevent_ping_pong *ping_pong);

#endif
