// The C floor of the TLS echo scenarios: a TLS echo server written directly on OpenSSL, one
// thread, non-blocking sockets and a level-triggered epoll loop. Its SSL_CTX is set up as
// PortRunLoopTLS sets up a server's (TLS 1.3 here, partial writes, a movable write buffer, no
// renegotiation, no compression, the server's cipher preference, OpenSSL's default session
// tickets), and its SSL objects read and write through the same kind of BIO (recv, and send with
// MSG_NOSIGNAL). Each readiness: the handshake moves on, or queued echo bytes are written, or
// records are read (until OpenSSL wants more input) and each one's plaintext is written back;
// what a write could not send waits, and reading waits with it. A peer's close_notify is answered
// with close_notify, then the socket closes. Traffic on 127.0.0.1 only.
//
// No system headers here (see CBenchNative's cbench_sockets.h). Plain C types only.
// Thread-safety: create, stop and destroy from one driving thread; the server runs on a thread of
// its own.
#ifndef PORTRUNLOOP_CBENCH_TLS_SERVER_H
#define PORTRUNLOOP_CBENCH_TLS_SERVER_H

typedef struct cbench_tls_server cbench_tls_server;

/// Loads the certificate and key (PEM files), listens on 127.0.0.1 (port chosen by the kernel,
/// backlog 4096) and starts the server's thread. NULL on failure (the reason on stderr).
/// Thread-safety: any thread.
cbench_tls_server *cbench_tls_server_create(const char *certificate_path, const char *key_path);

/// The listening port. Thread-safety: any thread.
int cbench_tls_server_port(const cbench_tls_server *server);

/// The CPU-time clock of the server's thread (a clockid_t). Thread-safety: any thread.
int cbench_tls_server_cpu_clock(const cbench_tls_server *server);

/// Handshakes completed so far. Thread-safety: any thread.
long long cbench_tls_server_handshakes(const cbench_tls_server *server);

/// Stops the thread, closes every connection and the listener, and frees the server.
/// Thread-safety: the driving thread, once.
void cbench_tls_server_destroy(cbench_tls_server *server);

#endif
