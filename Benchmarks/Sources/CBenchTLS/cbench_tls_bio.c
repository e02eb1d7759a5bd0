#define _GNU_SOURCE
#include "cbench_tls_bio.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

static int bio_descriptor(BIO *bio) { return (int)(intptr_t)BIO_get_data(bio); }

static int bio_write(BIO *bio, const char *bytes, int length) {
    BIO_clear_retry_flags(bio);
    if (length <= 0) return 0;
    ssize_t sent;
    do {
        sent = send(bio_descriptor(bio), bytes, (size_t)length, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_write(bio);
    return (int)sent;
}

static int bio_read(BIO *bio, char *buffer, int capacity) {
    BIO_clear_retry_flags(bio);
    if (buffer == NULL || capacity <= 0) return 0;
    ssize_t received;
    do {
        received = recv(bio_descriptor(bio), buffer, (size_t)capacity, 0);
    } while (received < 0 && errno == EINTR);
    if (received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_read(bio);
    if (received == 0) BIO_set_flags(bio, BIO_FLAGS_IN_EOF);
    return (int)received;
}

static int bio_puts(BIO *bio, const char *text) { return bio_write(bio, text, (int)strlen(text)); }

static long bio_ctrl(BIO *bio, int command, long number, void *pointer) {
    (void)number;
    switch (command) {
    case BIO_CTRL_FLUSH: return 1;
    case BIO_CTRL_EOF: return BIO_test_flags(bio, BIO_FLAGS_IN_EOF) != 0;
    case BIO_C_GET_FD:
        if (pointer != NULL) *(int *)pointer = bio_descriptor(bio);
        return bio_descriptor(bio);
    default: return 0;
    }
}

static int bio_create(BIO *bio) {
    BIO_set_data(bio, (void *)(intptr_t)-1);
    BIO_set_init(bio, 0);
    return 1;
}

static int bio_destroy(BIO *bio) { return bio != NULL; }

static BIO_METHOD *method;
static pthread_once_t method_once = PTHREAD_ONCE_INIT;

static void make_method(void) {
    BIO_METHOD *made = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "cbench socket");
    if (made == NULL) return;
    if (!BIO_meth_set_write(made, bio_write) || !BIO_meth_set_read(made, bio_read) || !BIO_meth_set_puts(made, bio_puts)
        || !BIO_meth_set_ctrl(made, bio_ctrl) || !BIO_meth_set_create(made, bio_create)
        || !BIO_meth_set_destroy(made, bio_destroy)) {
        BIO_meth_free(made);
        return;
    }
    method = made;
}

BIO *cbench_tls_bio_new(int fd) {
    pthread_once(&method_once, make_method);
    if (method == NULL) return NULL;
    BIO *bio = BIO_new(method);
    if (bio == NULL) return NULL;
    BIO_set_data(bio, (void *)(intptr_t)fd);
    BIO_set_init(bio, 1);
    return bio;
}

int cbench_tls_context_setup(SSL_CTX *context) {
    if (!SSL_CTX_set_min_proto_version(context, TLS1_3_VERSION)) return 0;
    if (!SSL_CTX_set_max_proto_version(context, TLS1_3_VERSION)) return 0;
    SSL_CTX_set_mode(context, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_options(context, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    return 1;
}
