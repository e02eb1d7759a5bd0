// The D-Bus floor of the cross-process scenarios: the same exchange as cbench_seqpacket.h ('E' echo,
// 'S' sink, 'F' flush) as method calls (`Echo`, `Sink` with no reply wanted, `Flush`) of interface
// org.portrunloop.Bench at /org/portrunloop/Bench, owned by the bus name org.portrunloop.BenchPeer,
// through a dbus-daemon, with libdbus-1 on both sides. The payload is one `ay` argument.
//
// No system headers here (see cbench_sockets.h); a connection is an opaque pointer.
// Thread-safety: each connection is used by one thread.
#ifndef PORTRUNLOOP_CBENCH_DBUS_H
#define PORTRUNLOOP_CBENCH_DBUS_H

/// Connects to the bus at `address`, owns org.portrunloop.BenchPeer, writes "ready\n" to `ready_fd`
/// (if >= 0) and serves calls until the bus goes away. Returns -1 if it cannot connect or own the name.
/// Thread-safety: the calling thread only.
int cbench_dbus_serve(const char *address, int ready_fd);

/// A private connection to the bus at `address`, registered with the bus; NULL on failure.
/// Thread-safety: any thread.
void *cbench_dbus_connect(const char *address);

/// `count` `Echo` calls with a `size`-byte payload, each waiting for its reply; latencies in ns to
/// `latencies_ns` when not NULL. Returns 0, or -1 on an error or a timeout (5 s).
/// Thread-safety: the thread that owns the connection.
int cbench_dbus_round_trips(void *connection, int count, int size, long long *latencies_ns);

/// `count` `Sink` calls (no reply wanted), then a `Flush` call, waiting for its reply.
/// Returns 0, or -1. Thread-safety: the thread that owns the connection.
int cbench_dbus_burst(void *connection, int count, int size);

/// Closes and releases a connection from ``cbench_dbus_connect``.
/// Thread-safety: the thread that owns the connection.
void cbench_dbus_close(void *connection);

#endif
