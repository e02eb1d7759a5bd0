// The load generator of the echo-server scenario: TCP connections to 127.0.0.1, driven by a few
// client threads, each owning its share of the connections and waiting on them with epoll. Every
// connection sends a request of `payload` bytes, waits until the same number of bytes came back
// (the echo), records the latency and sends the next, until the sample's requests are issued or
// its time cap passed; then every outstanding request is drained, so no byte is left in flight
// between samples. Traffic is to 127.0.0.1 only. No system headers: see cbench_sockets.h.
#ifndef PORTRUNLOOP_CBENCH_ECHO_LOAD_H
#define PORTRUNLOOP_CBENCH_ECHO_LOAD_H

/// The connections and the threads' epoll instances.
/// Thread-safety: create, run and destroy it from one driving thread at a time.
typedef struct cbench_echo_load cbench_echo_load;

/// Opens `connections` connections to 127.0.0.1:`port` (blocking connects, then non-blocking,
/// TCP_NODELAY), split over `threads` client threads. NULL with errno set on failure (every
/// connection made so far is closed). Thread-safety: any thread.
cbench_echo_load *cbench_echo_load_create(int port, int connections, int threads, int payload);

/// One sample: `requests` request/echo exchanges in total over all connections, issued until
/// CLOCK_MONOTONIC passes `cap_ns` after the start. `rate` 0: each connection sends its next
/// request as soon as its echo is in, and a latency runs from the send to the last echoed byte.
/// `rate` > 0: a fixed offered load of `rate` requests per second in all, spread evenly over the
/// client threads, each request due at its time and sent on one of its thread's connections with
/// nothing outstanding (all busy: it waits for one); a latency runs from when the request was due,
/// so time spent waiting for a connection counts. Latencies (ns) are written to
/// `latencies[0..<result]` (capacity `requests`). Returns the number of completed requests, or -1
/// when a connection failed or an echo did not come back within two seconds after the cap.
/// Thread-safety: the driving thread; blocks until the sample ended.
long cbench_echo_load_run(cbench_echo_load *load, long requests, long long cap_ns, long rate, long long *latencies);

/// Closes every connection and frees the load. Thread-safety: the driving thread, once.
void cbench_echo_load_destroy(cbench_echo_load *load);

#endif
