// The OpenSSL calls of PortRunLoopTLS (Sources/PortRunLoopTLS/), and what Swift cannot call
// directly: OpenSSL's function-like macros (SSL_CTX_set_mode, SSL_set_tlsext_host_name, ...), the
// callbacks it calls back (a socket BIO, ALPN selection, a passphrase refusal), and the loops that
// read PEM text. Only PortRunLoopTLS imports this module: the core does not link OpenSSL.
#ifndef PORTRUNLOOP_COPENSSL_SHIM_H
#define PORTRUNLOOP_COPENSSL_SHIM_H

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/bio.h>
#include <sys/socket.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// MARK: The socket BIO

// OpenSSL's own socket BIO writes with write(2), which raises SIGPIPE when the peer has reset the
// connection (and SIGPIPE's default action ends the process). This one writes with
// send(MSG_NOSIGNAL | MSG_DONTWAIT) and reads with recv(MSG_DONTWAIT): no signal, never a block,
// no process-wide signal disposition changed. Its data is the descriptor; it never closes it (the
// connection does).

static inline int portrunloop_tls_bio_descriptor(BIO *bio) {
    return (int)(intptr_t)BIO_get_data(bio);
}

static inline int portrunloop_tls_bio_write(BIO *bio, const char *bytes, int length) {
    BIO_clear_retry_flags(bio);
    if (length <= 0) return 0;
    ssize_t sent;
    do {
        sent = send(portrunloop_tls_bio_descriptor(bio), bytes, (size_t)length, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (sent < 0 && errno == EINTR);
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_write(bio);
    return (int)sent;
}

static inline int portrunloop_tls_bio_read(BIO *bio, char *buffer, int capacity) {
    BIO_clear_retry_flags(bio);
    if (buffer == NULL || capacity <= 0) return 0;
    ssize_t received;
    do {
        received = recv(portrunloop_tls_bio_descriptor(bio), buffer, (size_t)capacity, MSG_DONTWAIT);
    } while (received < 0 && errno == EINTR);
    if (received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_read(bio);
    // The end of the stream: OpenSSL asks BIO_eof() to tell a peer's TCP close from an error
    // (SSL_R_UNEXPECTED_EOF_WHILE_READING when no close_notify came first).
    if (received == 0) BIO_set_flags(bio, BIO_FLAGS_IN_EOF);
    return (int)received;
}

static inline int portrunloop_tls_bio_puts(BIO *bio, const char *text) {
    return portrunloop_tls_bio_write(bio, text, (int)strlen(text));
}

static inline long portrunloop_tls_bio_ctrl(BIO *bio, int command, long number, void *pointer) {
    (void)number;
    switch (command) {
    case BIO_CTRL_FLUSH: return 1; // nothing is buffered here
    case BIO_CTRL_EOF: return BIO_test_flags(bio, BIO_FLAGS_IN_EOF) != 0;
    case BIO_C_GET_FD:
        if (pointer != NULL) *(int *)pointer = portrunloop_tls_bio_descriptor(bio);
        return portrunloop_tls_bio_descriptor(bio);
    default: return 0;
    }
}

static inline int portrunloop_tls_bio_create(BIO *bio) {
    BIO_set_data(bio, (void *)(intptr_t)-1);
    BIO_set_init(bio, 0);
    return 1;
}

static inline int portrunloop_tls_bio_destroy(BIO *bio) { return bio != NULL; }

/// The socket BIO's method table (made once per process by its caller, never freed), or NULL.
static inline BIO_METHOD *portrunloop_tls_bio_method_new(void) {
    BIO_METHOD *method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "portrunloop socket");
    if (method == NULL) return NULL;
    if (!BIO_meth_set_write(method, portrunloop_tls_bio_write) || !BIO_meth_set_read(method, portrunloop_tls_bio_read)
        || !BIO_meth_set_puts(method, portrunloop_tls_bio_puts) || !BIO_meth_set_ctrl(method, portrunloop_tls_bio_ctrl)
        || !BIO_meth_set_create(method, portrunloop_tls_bio_create)
        || !BIO_meth_set_destroy(method, portrunloop_tls_bio_destroy)) {
        BIO_meth_free(method);
        return NULL;
    }
    return method;
}

/// A BIO of `method` over the connected, non-blocking socket `fd`, or NULL.
static inline BIO *portrunloop_tls_bio_new(BIO_METHOD *method, int fd) {
    BIO *bio = BIO_new(method);
    if (bio == NULL) return NULL;
    BIO_set_data(bio, (void *)(intptr_t)fd);
    BIO_set_init(bio, 1);
    return bio;
}

// MARK: Contexts

/// TLS 1.2 or later (`version`: TLS1_2_VERSION, TLS1_3_VERSION), partial writes, a write buffer
/// that may move between retries (a connection's outbound queue moves when it grows), no
/// renegotiation, no compression. 1, or 0 on failure.
static inline int portrunloop_tls_context_setup(SSL_CTX *context, int minimumVersion) {
    if (!SSL_CTX_set_min_proto_version(context, minimumVersion)) return 0;
    SSL_CTX_set_mode(context, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_options(context, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    return 1;
}

/// `SSL_MODE_NO_AUTO_CHAIN`: a context with its own certificate chain sends exactly that chain,
/// and does not search the trust store for intermediates at every handshake.
static inline void portrunloop_tls_no_auto_chain(SSL_CTX *context) {
    SSL_CTX_set_mode(context, SSL_MODE_NO_AUTO_CHAIN);
}

/// The passphrase callback of PEM reads: refuses to give one (OpenSSL's default would prompt on
/// the terminal), so an encrypted key fails to load instead of blocking.
static inline int portrunloop_tls_no_passphrase(char *buffer, int size, int flag, void *user) {
    (void)buffer; (void)size; (void)flag; (void)user;
    return -1;
}

/// Whether the error queue's last error is PEM's "no start line": a PEM read past the last block.
static inline int portrunloop_tls_at_pem_end(void) {
    unsigned long error = ERR_peek_last_error();
    return error != 0 && ERR_GET_LIB(error) == ERR_LIB_PEM && ERR_GET_REASON(error) == PEM_R_NO_START_LINE;
}

/// Loads a certificate chain in PEM (the leaf first, then its intermediates) into `context`.
/// Returns the certificates loaded (0: the text held none), or -1 (the error queue says why).
static inline int portrunloop_tls_use_certificate_chain(SSL_CTX *context, const char *pem, int length) {
    BIO *bio = BIO_new_mem_buf(pem, length);
    if (bio == NULL) return -1;
    int count = 0;
    X509 *certificate;
    while ((certificate = PEM_read_bio_X509(bio, NULL, portrunloop_tls_no_passphrase, NULL)) != NULL) {
        int ok = count == 0 ? SSL_CTX_use_certificate(context, certificate) : (int)SSL_CTX_add0_chain_cert(context, certificate);
        if (count == 0) X509_free(certificate); // use_certificate took its own reference; add0 took ours
        if (!ok) { if (count > 0) X509_free(certificate); BIO_free(bio); return -1; }
        count++;
    }
    BIO_free(bio);
    if (!portrunloop_tls_at_pem_end()) return -1;
    ERR_clear_error();
    return count;
}

/// Loads a private key in PEM (not encrypted) into `context`. 1, or 0 (the error queue says why).
static inline int portrunloop_tls_use_private_key(SSL_CTX *context, const char *pem, int length) {
    BIO *bio = BIO_new_mem_buf(pem, length);
    if (bio == NULL) return 0;
    EVP_PKEY *key = PEM_read_bio_PrivateKey(bio, NULL, portrunloop_tls_no_passphrase, NULL);
    BIO_free(bio);
    if (key == NULL) return 0;
    int ok = SSL_CTX_use_PrivateKey(context, key);
    EVP_PKEY_free(key);
    return ok;
}

/// Adds the certificates of a PEM text to `context`'s trust store. Returns how many (0: the
/// text held none), or -1 (the error queue says why).
static inline int portrunloop_tls_add_trust_roots(SSL_CTX *context, const char *pem, int length) {
    X509_STORE *store = SSL_CTX_get_cert_store(context);
    BIO *bio = BIO_new_mem_buf(pem, length);
    if (store == NULL || bio == NULL) { BIO_free(bio); return -1; }
    int count = 0;
    X509 *certificate;
    while ((certificate = PEM_read_bio_X509(bio, NULL, portrunloop_tls_no_passphrase, NULL)) != NULL) {
        int ok = X509_STORE_add_cert(store, certificate);
        X509_free(certificate);
        if (!ok) { BIO_free(bio); return -1; }
        count++;
    }
    BIO_free(bio);
    if (!portrunloop_tls_at_pem_end()) return -1;
    ERR_clear_error();
    return count;
}

// MARK: ALPN

/// A server's ALPN protocols in wire format (length-prefixed names), in its order of preference.
typedef struct {
    unsigned int length;
    unsigned char bytes[];
} portrunloop_tls_alpn;

/// A copy of `wire` (`length` bytes) for ``portrunloop_tls_set_alpn_server``; free it with
/// `free` after the context it was given to.
static inline portrunloop_tls_alpn *portrunloop_tls_alpn_new(const unsigned char *wire, unsigned int length) {
    portrunloop_tls_alpn *alpn = malloc(sizeof(portrunloop_tls_alpn) + length);
    if (alpn == NULL) return NULL;
    alpn->length = length;
    memcpy(alpn->bytes, wire, length);
    return alpn;
}

/// The server's choice: its first protocol the client offered. None in common: the handshake
/// fails with the `no_application_protocol` alert (RFC 7301).
static inline int portrunloop_tls_alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outLength,
                                              const unsigned char *offered, unsigned int offeredLength, void *argument) {
    (void)ssl;
    const portrunloop_tls_alpn *server = argument;
    unsigned char *selected = NULL;
    unsigned char selectedLength = 0;
    if (SSL_select_next_proto(&selected, &selectedLength, server->bytes, server->length, offered, offeredLength)
        != OPENSSL_NPN_NEGOTIATED) {
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    }
    *out = selected;
    *outLength = selectedLength;
    return SSL_TLSEXT_ERR_OK;
}

/// Makes `context`'s servers choose among `alpn` (which must outlive the context).
static inline void portrunloop_tls_set_alpn_server(SSL_CTX *context, portrunloop_tls_alpn *alpn) {
    SSL_CTX_set_alpn_select_cb(context, portrunloop_tls_alpn_select, alpn);
}

// MARK: Connections

/// The verification callback of a peer whose certificate is asked for but not checked.
static inline int portrunloop_tls_accept_any_certificate(int preverified, X509_STORE_CTX *store) {
    (void)preverified; (void)store;
    return 1;
}

/// `SSL_set_verify(ssl, mode, acceptAny ? accept-any : NULL)`.
static inline void portrunloop_tls_set_verify(SSL *ssl, int mode, int acceptAny) {
    SSL_set_verify(ssl, mode, acceptAny ? portrunloop_tls_accept_any_certificate : NULL);
}

/// Sends `name` as the server name (SNI). 1, or 0.
static inline int portrunloop_tls_set_server_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

/// The reason code of a packed OpenSSL error (ERR_GET_REASON).
static inline int portrunloop_tls_error_reason(unsigned long error) { return ERR_GET_REASON(error); }

/// The peer certificate's subject (RFC 2253), malloc'd (free it with `free`), or NULL when the
/// peer sent none.
static inline char *portrunloop_tls_peer_subject(const SSL *ssl) {
    X509 *peer = SSL_get0_peer_certificate(ssl);
    if (peer == NULL) return NULL;
    BIO *out = BIO_new(BIO_s_mem());
    if (out == NULL) return NULL;
    X509_NAME_print_ex(out, X509_get_subject_name(peer), 0, XN_FLAG_RFC2253);
    char *data = NULL;
    long length = BIO_get_mem_data(out, &data);
    char *text = malloc((size_t)length + 1);
    if (text != NULL) {
        if (length > 0) memcpy(text, data, (size_t)length);
        text[length] = 0;
    }
    BIO_free(out);
    return text;
}

/// The name of the connection's cipher suite, or NULL before the handshake.
static inline const char *portrunloop_tls_cipher_name(const SSL *ssl) {
    const SSL_CIPHER *cipher = SSL_get_current_cipher(ssl);
    return cipher == NULL ? NULL : SSL_CIPHER_get_name(cipher);
}

#endif
