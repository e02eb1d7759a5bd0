// The Redis floor of the bus-notification scenarios: a notification exactly as
// BusNotificationCenter(redis:) publishes it (Docs/RedisNotifications.md, "Channels", "Payload"):
// PUBLISH on `portrunloop.notification.<name>` of the binary payload with the userInfo
// {"from": "bench-peer", "seq": N} (or, for a bare client, no userInfo and the object
// "bench-peer"), with hiredis' synchronous API on one context (pipelined, replies read every 64),
// and SUBSCRIBE on another context, reading each message's seq back from its payload (a bare
// client counts messages instead). A durable client does what BusNotificationCenter(redis:) does
// for a durable name (RedisNotifications.md, "Durable notifications"): XADD ... MAXLEN ~ 100000 *
// payload <payload> instead of PUBLISH, and, observing, XGROUP CREATE ... $ MKSTREAM, then
// XREADGROUP GROUP <group> c COUNT 100 BLOCK 1000 STREAMS <key> > on the second context, each
// read's entries handed out one by one and acknowledged (XACK, written with the next read) once
// they all were.
//
// No system headers here (see cbench_sockets.h); a client is an opaque pointer.
// Thread-safety: each client is used by one thread.
#ifndef PORTRUNLOOP_CBENCH_BUS_REDIS_H
#define PORTRUNLOOP_CBENCH_BUS_REDIS_H

/// Two connections to the server at 127.0.0.1:`port`; when `observed_name` is not NULL, the second
/// is subscribed to that notification's channel (confirmed on return). A `bare` client posts
/// notifications with an object and no userInfo (no seq: it supports bursts, not round trips). A
/// `durable` client posts to and reads the notification's stream (see above) instead.
/// NULL on failure. Thread-safety: any thread.
void *cbench_bus_redis_open(int port, const char *observed_name, int bare, int durable);

/// Publishes `count` notifications named `name` (seq 0…count-1), pipelined, and reads every reply.
/// Returns 0, or -1. Thread-safety: the thread that owns the client.
int cbench_bus_redis_post_burst(void *client, const char *name, int count);

/// Reads messages until `target` observed notifications have been received since the client was
/// opened. Returns 0, or -1 on an error or a 5 s silence. Thread-safety: the owning thread.
int cbench_bus_redis_receive(void *client, long long target);

/// `count` round trips: publishes `ping_name` (seq i) and waits for the observed answer carrying
/// seq i; latencies in ns to `latencies_ns` when not NULL. Returns 0, or -1.
/// Thread-safety: the thread that owns the client.
int cbench_bus_redis_round_trips(void *client, const char *ping_name, int count, long long *latencies_ns);

/// Answers every observed notification with one named `answer_name` carrying the same seq, until
/// the connection fails. Returns 0 then. Thread-safety: the thread that owns the client.
int cbench_bus_redis_echo(void *client, const char *answer_name);

/// Closes and releases a client from ``cbench_bus_redis_open``.
/// Thread-safety: the thread that owns the client.
void cbench_bus_redis_close(void *client);

#endif
