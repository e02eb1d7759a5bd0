#define _GNU_SOURCE
#include "cbench_tls_client.h"
#include "cbench_tls_bio.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_PAYLOAD 4096
#define MAX_THREADS 16
#define RECORD (16 * 1024)
#define STALL_MS 5000

struct cbench_tls_client {
    SSL_CTX *context;
    int port;
    // The stream of the bulk scenario (fd -1: none).
    int stream_fd;
    SSL *stream;
    unsigned char outgoing[RECORD];
    unsigned char incoming[64 * 1024];
};

/// One handshake run's shared state.
struct run {
    cbench_tls_client *client;
    long count;
    long long deadline_ns;
    int payload;
    long started, completed, failed; // atomic
};

static long long monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

static void report(const char *what) {
    fprintf(stderr, "cbench_tls_client: %s (errno %d)\n", what, errno);
    ERR_print_errors_fp(stderr);
}

/// A blocking TCP connection to 127.0.0.1:`port` with TCP_NODELAY, or -1.
static int connect_loopback(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                                  .sin_port = htons((unsigned short)port)};
    int one = 1;
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0
        || setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/// An SSL of the client's context over `fd`, its handshake done (the socket blocking), or NULL.
static SSL *handshake(cbench_tls_client *client, int fd) {
    SSL *ssl = SSL_new(client->context);
    BIO *bio = cbench_tls_bio_new(fd);
    if (ssl == NULL || bio == NULL) {
        SSL_free(ssl);
        BIO_free(bio);
        return NULL;
    }
    SSL_set_bio(ssl, bio, bio);
    if (SSL_connect(ssl) != 1) {
        SSL_free(ssl);
        return NULL;
    }
    return ssl;
}

/// close_notify both ways on a blocking socket: ours, then the server's read (after whatever it
/// still sends). 0, or -1.
static int close_notify(SSL *ssl) {
    int result = SSL_shutdown(ssl);
    if (result < 0) return -1;
    while (result == 0) {
        unsigned char scratch[256];
        size_t count;
        if (SSL_read_ex(ssl, scratch, sizeof scratch, &count) == 1) continue;
        return SSL_get_error(ssl, 0) == SSL_ERROR_ZERO_RETURN ? 0 : -1;
    }
    return 0;
}

/// One connection: handshake, `payload` bytes there and back, close_notify both ways. 0, or -1.
static int one_handshake(cbench_tls_client *client, int payload, unsigned char *buffer) {
    int fd = connect_loopback(client->port);
    if (fd < 0) {
        report("connect failed");
        return -1;
    }
    SSL *ssl = handshake(client, fd);
    if (ssl == NULL) {
        report("the handshake failed");
        close(fd);
        return -1;
    }
    int ok = 0;
    size_t count;
    if (SSL_write_ex(ssl, buffer, (size_t)payload, &count) == 1 && (int)count == payload) {
        int received = 0;
        while (received < payload && SSL_read_ex(ssl, buffer + received, (size_t)(payload - received), &count) == 1) {
            received += (int)count;
        }
        ok = received == payload && close_notify(ssl) == 0;
    }
    if (!ok) report("the echo or the close failed");
    SSL_free(ssl);
    close(fd);
    return ok ? 0 : -1;
}

static void *handshake_thread(void *argument) {
    struct run *run = argument;
    unsigned char buffer[MAX_PAYLOAD];
    memset(buffer, 'x', sizeof buffer);
    while (!__atomic_load_n(&run->failed, __ATOMIC_RELAXED)) {
        if (__atomic_fetch_add(&run->started, 1, __ATOMIC_RELAXED) >= run->count || monotonic_ns() >= run->deadline_ns) break;
        if (one_handshake(run->client, run->payload, buffer) != 0) {
            __atomic_store_n(&run->failed, 1, __ATOMIC_RELAXED);
            break;
        }
        __atomic_add_fetch(&run->completed, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

cbench_tls_client *cbench_tls_client_create(int port) {
    cbench_tls_client *client = calloc(1, sizeof *client);
    if (client == NULL) return NULL;
    client->port = port;
    client->stream_fd = -1;
    memset(client->outgoing, 'x', sizeof client->outgoing);
    client->context = SSL_CTX_new(TLS_client_method());
    if (client->context == NULL || !cbench_tls_context_setup(client->context)
        || SSL_CTX_set_ciphersuites(client->context, "TLS_AES_128_GCM_SHA256") != 1
        || SSL_CTX_set1_groups_list(client->context, "X25519") != 1) {
        report("the client context could not be made");
        SSL_CTX_free(client->context);
        free(client);
        return NULL;
    }
    SSL_CTX_set_verify(client->context, SSL_VERIFY_NONE, NULL);
    SSL_CTX_set_session_cache_mode(client->context, SSL_SESS_CACHE_OFF);
    return client;
}

long cbench_tls_client_handshakes(cbench_tls_client *client, long count, long long cap_ns, int threads, int payload) {
    if (threads < 1 || threads > MAX_THREADS || payload < 1 || payload > MAX_PAYLOAD) return -1;
    struct run run = {.client = client, .count = count, .deadline_ns = monotonic_ns() + cap_ns, .payload = payload};
    pthread_t ids[MAX_THREADS];
    int made = 0;
    for (; made < threads; made++) {
        if (pthread_create(&ids[made], NULL, handshake_thread, &run) != 0) {
            run.failed = 1;
            break;
        }
    }
    for (int i = 0; i < made; i++) pthread_join(ids[i], NULL);
    return run.failed ? -1 : run.completed;
}

int cbench_tls_client_open_stream(cbench_tls_client *client) {
    if (client->stream_fd >= 0) return -1;
    int fd = connect_loopback(client->port);
    if (fd < 0) {
        report("connect failed");
        return -1;
    }
    SSL *ssl = handshake(client, fd);
    if (ssl == NULL || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
        report("the stream's handshake failed");
        SSL_free(ssl);
        close(fd);
        return -1;
    }
    client->stream_fd = fd;
    client->stream = ssl;
    return 0;
}

int cbench_tls_client_echo(cbench_tls_client *client, long long total, int chunk, int window) {
    if (client->stream_fd < 0 || chunk < 1 || chunk > RECORD || window < chunk) return -1;
    SSL *ssl = client->stream;
    long long sent = 0, received = 0;
    while (received < total) {
        int progressed = 0;
        short wants = POLLIN;
        // Writes while the window allows, one record each, until the socket is full.
        while (sent < total && sent - received + chunk <= window) {
            size_t count = 0;
            size_t length = (size_t)(total - sent < chunk ? total - sent : chunk);
            if (SSL_write_ex(ssl, client->outgoing, length, &count) == 1) {
                sent += (long long)count;
                progressed = 1;
                continue;
            }
            int error = SSL_get_error(ssl, 0);
            if (error == SSL_ERROR_WANT_WRITE) wants |= POLLOUT;
            else if (error != SSL_ERROR_WANT_READ) {
                report("a write failed");
                return -1;
            }
            break;
        }
        // Reads what came back, until OpenSSL needs more input.
        for (;;) {
            size_t count = 0;
            if (SSL_read_ex(ssl, client->incoming, sizeof client->incoming, &count) == 1) {
                received += (long long)count;
                progressed = 1;
                continue;
            }
            int error = SSL_get_error(ssl, 0);
            if (error == SSL_ERROR_WANT_WRITE) wants |= POLLOUT;
            else if (error != SSL_ERROR_WANT_READ) {
                report("a read failed");
                return -1;
            }
            break;
        }
        if (progressed || received >= total) continue;
        struct pollfd descriptor = {.fd = client->stream_fd, .events = wants};
        int ready = poll(&descriptor, 1, STALL_MS);
        if (ready == 0) {
            fprintf(stderr, "cbench_tls_client: the echo stalled (%lld of %lld bytes back)\n", received, total);
            return -1;
        }
        if (ready < 0 && errno != EINTR) {
            report("poll failed");
            return -1;
        }
    }
    return received == total ? 0 : -1;
}

void cbench_tls_client_destroy(cbench_tls_client *client) {
    if (client->stream_fd >= 0) {
        int flags = fcntl(client->stream_fd, F_GETFL);
        fcntl(client->stream_fd, F_SETFL, flags & ~O_NONBLOCK);
        if (close_notify(client->stream) != 0) report("the stream's close failed");
        SSL_free(client->stream);
        close(client->stream_fd);
    }
    SSL_CTX_free(client->context);
    free(client);
}
