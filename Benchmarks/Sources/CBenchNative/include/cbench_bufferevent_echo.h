// libevent's own buffered connections as an echo server: an evconnlistener accepting on 127.0.0.1,
// a bufferevent per connection whose read callback moves its input buffer to its output buffer
// (evbuffer_add_buffer: libevent's idiomatic, copy-free echo), on one thread running the base.
// The floor that EchoServer.Streams, the library's hand-written buffered connections, is measured
// against. No system header here (CBenchNative's rule).
#ifndef PORTRUNLOOP_CBENCH_BUFFEREVENT_ECHO_H
#define PORTRUNLOOP_CBENCH_BUFFEREVENT_ECHO_H

typedef struct cbench_bufferevent_echo cbench_bufferevent_echo;

/// Starts the server thread listening on an ephemeral port of 127.0.0.1 with `backlog`; NULL on
/// failure.
cbench_bufferevent_echo *cbench_bufferevent_echo_start(int backlog);
/// The listening port.
int cbench_bufferevent_echo_port(const cbench_bufferevent_echo *server);
/// The server thread's CPU-time clock (a clockid_t), -1 when unknown.
int cbench_bufferevent_echo_cpu_clock(const cbench_bufferevent_echo *server);
/// Connections accepted so far.
long cbench_bufferevent_echo_accepted(const cbench_bufferevent_echo *server);
/// Stops the thread, frees every connection, the listener and the base, and the server.
void cbench_bufferevent_echo_stop(cbench_bufferevent_echo *server);

#endif
