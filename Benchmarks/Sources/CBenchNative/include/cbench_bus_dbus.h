// The D-Bus floor of the bus-notification scenarios: a notification exactly as
// BusNotificationCenter sends it (Docs/DistributedNotifications.md, "Wire format"): the signal
// org.portrunloop.DistributedNotification.Posted at /org/portrunloop/Notifications, signature
// `ssa{sv}b` (name, object "" = none, userInfo {"from": s "bench-peer", "seq": x N},
// deliverImmediately false), built with dbus_message_iter_* and sent with dbus_connection_send;
// received through a match rule on the name (arg0) and a filter that reads the arguments back.
//
// No system headers here (see cbench_sockets.h); a bus is an opaque pointer.
// Thread-safety: each bus is used by one thread.
#ifndef PORTRUNLOOP_CBENCH_BUS_DBUS_H
#define PORTRUNLOOP_CBENCH_BUS_DBUS_H

/// A private connection to the bus at `address`, registered; when `observed_name` is not NULL, it
/// receives notifications of that name (the match rule is in effect on return). NULL on failure.
/// Thread-safety: any thread.
void *cbench_bus_dbus_open(const char *address, const char *observed_name);

/// Posts `count` notifications named `name` (seq 0…count-1), writing what is queued every 64 and
/// at the end. Returns 0, or -1. Thread-safety: the thread that owns the bus.
int cbench_bus_dbus_post_burst(void *bus, const char *name, int count);

/// Reads and dispatches until `target` observed notifications have been received since the bus was
/// opened. Returns 0, or -1 on a disconnection or when `timeout_ms` passes.
/// Thread-safety: the thread that owns the bus.
int cbench_bus_dbus_receive(void *bus, long long target, int timeout_ms);

/// `count` round trips: posts `ping_name` (seq i) and waits for the observed answer carrying seq i;
/// each latency in ns to `latencies_ns` when not NULL. Returns 0, or -1 (5 s per answer at most).
/// Thread-safety: the thread that owns the bus.
int cbench_bus_dbus_round_trips(void *bus, const char *ping_name, int count, long long *latencies_ns);

/// Answers every observed notification with one named `answer_name` carrying the same seq, until
/// the bus goes away. Returns 0 then. Thread-safety: the thread that owns the bus.
int cbench_bus_dbus_echo(void *bus, const char *answer_name);

/// Closes and releases a bus from ``cbench_bus_dbus_open``.
/// Thread-safety: the thread that owns the bus.
void cbench_bus_dbus_close(void *bus);

#endif
