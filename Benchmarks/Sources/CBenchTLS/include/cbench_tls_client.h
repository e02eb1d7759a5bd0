// The client of the TLS echo scenarios, the same for every server: OpenSSL on blocking sockets
// (handshakes) or one non-blocking socket driven with poll (bulk), TLS 1.3 only, offering only
// TLS_AES_128_GCM_SHA256 and the X25519 group, not verifying the server's certificate (the
// client's own cost kept small; the server's work is the same whatever the client checks), never
// resuming a session. Its SSL objects use the server's BIO (recv, send with MSG_NOSIGNAL).
//
// No system headers here (see CBenchNative's cbench_sockets.h). Plain C types only.
// Thread-safety: a client is used by one driving thread; a handshake run uses threads of its own.
#ifndef PORTRUNLOOP_CBENCH_TLS_CLIENT_H
#define PORTRUNLOOP_CBENCH_TLS_CLIENT_H

typedef struct cbench_tls_client cbench_tls_client;

/// A client of the server at 127.0.0.1:`port`. NULL on failure (the reason on stderr).
/// Thread-safety: any thread.
cbench_tls_client *cbench_tls_client_create(int port);

/// `threads` threads each connect, complete a handshake, send `payload` bytes (at most 4096), read
/// them back, exchange close_notify and close, again and again, until `count` handshakes were
/// started or `cap_ns` passed (the ones started finish). Returns the handshakes completed, or -1
/// when one failed (the reason on stderr). Thread-safety: the driving thread.
long cbench_tls_client_handshakes(cbench_tls_client *client, long count, long long cap_ns, int threads, int payload);

/// Connects one TLS connection for ``cbench_tls_client_echo`` (the handshake done on return).
/// 0, or -1 (the reason on stderr). Thread-safety: the driving thread.
int cbench_tls_client_open_stream(cbench_tls_client *client);

/// Writes `total` bytes on the stream in `chunk`-byte writes (at most 16384: one record each) and
/// reads them back as they come, with at most `window` bytes in flight. 0, or -1 (an error, or 5 s
/// without progress; the reason on stderr). Thread-safety: the driving thread.
int cbench_tls_client_echo(cbench_tls_client *client, long long total, int chunk, int window);

/// Ends the stream (close_notify both ways), if one is open, and frees the client.
/// Thread-safety: the driving thread, once.
void cbench_tls_client_destroy(cbench_tls_client *client);

#endif
