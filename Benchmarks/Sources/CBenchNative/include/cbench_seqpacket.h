// The raw cross-process floor: AF_UNIX SOCK_SEQPACKET messages between two processes, with nothing
// on top (no framing, naming, credits or loop). The server half runs in the peer process
// (CrossProcessBenchPeer), the client half in the benchmark.
//
// The exchange every cross-process peer implements: a message's first byte is its kind:
//   'E' echo   the server sends the same message back;
//   'S' sink   the server only counts it;
//   'F' flush  the server answers one byte 'F' once every earlier message of the connection is handled.
//
// No system headers here (see cbench_sockets.h). Thread-safety: each descriptor is used by one thread.
#ifndef PORTRUNLOOP_CBENCH_SEQPACKET_H
#define PORTRUNLOOP_CBENCH_SEQPACKET_H

/// Serves `path` (unlinked first) until the process is killed: one thread, epoll over the listener
/// and every connection, up to 64 messages per ready connection per turn. Returns -1 with errno set
/// if it cannot listen; writes "ready\n" to `ready_fd` (if >= 0) once it listens.
/// Thread-safety: the calling thread only.
int cbench_seqpacket_serve(const char *path, int ready_fd);

/// A blocking client connection to `path`. Returns the descriptor, or -1 with errno set.
/// Thread-safety: any thread.
int cbench_seqpacket_connect(const char *path);

/// `count` echo round trips of `size`-byte messages (size >= 1); the latency of each, in ns, is
/// written to `latencies_ns[i]` when it is not NULL. Returns 0, or -1 with errno set.
/// Thread-safety: the thread that owns `fd`.
int cbench_seqpacket_round_trips(int fd, int count, int size, long long *latencies_ns);

/// Sends `count` sink messages of `size` bytes, then a flush, and waits for its answer.
/// Returns 0, or -1 with errno set. Thread-safety: the thread that owns `fd`.
int cbench_seqpacket_burst(int fd, int count, int size);

#endif
