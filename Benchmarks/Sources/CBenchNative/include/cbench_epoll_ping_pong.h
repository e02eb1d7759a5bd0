// The epoll floor of the fd ping-pong: a bare epoll_wait(2) loop, level-triggered, over the two
// ends of a non-blocking AF_UNIX socketpair. One byte is in flight: the end that becomes readable
// reads it and writes it back, which makes the other end readable; each read is one event.
// No system headers: see cbench_sockets.h.
#ifndef PORTRUNLOOP_CBENCH_EPOLL_PING_PONG_H
#define PORTRUNLOOP_CBENCH_EPOLL_PING_PONG_H

/// An epoll instance watching both ends of a socketpair for EPOLLIN.
/// Thread-safety: create, run and destroy it on one thread at a time.
typedef struct cbench_epoll_ping_pong cbench_epoll_ping_pong;

/// Makes the socketpair and the epoll instance. NULL with errno set on failure.
/// Thread-safety: any thread.
cbench_epoll_ping_pong *cbench_epoll_ping_pong_create(void);

/// Writes one byte and handles events until `events` were handled, or until CLOCK_MONOTONIC passes
/// `deadline_ns` (checked every 64 events; 0: no deadline). The last event writes nothing back, so
/// no byte is left in flight. Returns the events handled, or -1 with errno set.
/// Thread-safety: the thread that owns the ping-pong.
long cbench_epoll_ping_pong_run(cbench_epoll_ping_pong *ping_pong, long events, long long deadline_ns);

/// Closes everything and frees the ping-pong. Thread-safety: the owning thread, once.
void cbench_epoll_ping_pong_destroy(cbench_epoll_ping_pong *ping_pong);

#endif
