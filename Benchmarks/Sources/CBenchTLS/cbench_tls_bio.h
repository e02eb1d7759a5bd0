// What the TLS floor's server and client share (not a public header of the target): the socket
// BIO, made like PortRunLoopTLS's (COpenSSL/shim.h): recv, and send with MSG_NOSIGNAL, so that a
// write to a reset peer fails with EPIPE rather than raising SIGPIPE. The servers' sockets are
// non-blocking, so recv and send never block there (PortRunLoopTLS adds MSG_DONTWAIT, which is
// the same on a non-blocking socket); the handshake clients' sockets block.
#ifndef PORTRUNLOOP_CBENCH_TLS_BIO_H
#define PORTRUNLOOP_CBENCH_TLS_BIO_H

#include <openssl/ssl.h>

/// A BIO over `fd` (which it never closes), or NULL. Thread-safety: any thread.
BIO *cbench_tls_bio_new(int fd);

/// The `SSL_CTX_set_mode`/`SSL_CTX_set_options` PortRunLoopTLS gives every context
/// (portrunloop_tls_context_setup), with TLS 1.3 as the only version. 1, or 0.
/// Thread-safety: any thread, before the context is shared.
int cbench_tls_context_setup(SSL_CTX *context);

#endif
