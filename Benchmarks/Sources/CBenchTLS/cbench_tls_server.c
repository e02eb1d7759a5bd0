#define _GNU_SOURCE
#include "cbench_tls_server.h"
#include "cbench_tls_bio.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define READ_CAPACITY (64 * 1024)
#define MAX_EVENTS 256

struct connection {
    int fd;
    SSL *ssl;
    int open; // the handshake completed
    unsigned interest; // the epoll events registered
    // Echo bytes a write could not send yet (reading waits until they are sent).
    unsigned char *pending;
    size_t pending_count, pending_capacity;
    struct connection *previous, *next; // the server's open connections
};

struct cbench_tls_server {
    SSL_CTX *context;
    int listen_fd, stop_fd, epoll_fd, port;
    pthread_t thread;
    clockid_t clock;
    long long handshakes; // atomic
    struct connection *connections; // the server's thread only
    unsigned char buffer[READ_CAPACITY];
};

// Markers of the listener and the stop eventfd in epoll's data (connections carry their pointer).
static char listener_marker, stop_marker;

static void close_connection(cbench_tls_server *server, struct connection *connection) {
    if (connection->previous) connection->previous->next = connection->next;
    else server->connections = connection->next;
    if (connection->next) connection->next->previous = connection->previous;
    SSL_free(connection->ssl);
    close(connection->fd); // also leaves the epoll set
    free(connection->pending);
    free(connection);
}

static int set_interest(cbench_tls_server *server, struct connection *connection, unsigned interest) {
    if (interest == connection->interest) return 0;
    struct epoll_event event = {.events = interest, .data.ptr = connection};
    connection->interest = interest;
    return epoll_ctl(server->epoll_fd, EPOLL_CTL_MOD, connection->fd, &event);
}

/// The events an OpenSSL call that returned `result` waits for; 0: the connection is done with
/// (failed, or the peer's close_notify answered).
static unsigned wait_for(struct connection *connection, int result) {
    switch (SSL_get_error(connection->ssl, result)) {
    case SSL_ERROR_WANT_READ: return EPOLLIN;
    case SSL_ERROR_WANT_WRITE: return EPOLLOUT;
    case SSL_ERROR_ZERO_RETURN:
        SSL_shutdown(connection->ssl); // our close_notify in answer
        return 0;
    default:
        ERR_clear_error();
        return 0;
    }
}

/// Writes the `count` bytes at `bytes` (not the pending buffer); what a write could not send is
/// copied to `pending`, to be given to the next write as it was (OpenSSL's retry rule). The events
/// to wait for (EPOLLIN: all written), or 0 on failure.
static unsigned echo(struct connection *connection, const unsigned char *bytes, size_t count) {
    while (count > 0) {
        size_t written = 0;
        int result = SSL_write_ex(connection->ssl, bytes, count, &written);
        if (result == 1) {
            bytes += written;
            count -= written;
            continue;
        }
        unsigned waits = wait_for(connection, result);
        if (waits == 0) return 0;
        if (connection->pending_capacity < count) {
            unsigned char *grown = realloc(connection->pending, count);
            if (grown == NULL) return 0;
            connection->pending = grown;
            connection->pending_capacity = count;
        }
        memcpy(connection->pending, bytes, count);
        connection->pending_count = count;
        return waits;
    }
    return EPOLLIN;
}

/// Writes the pending bytes. The events to wait for (EPOLLIN: all written), or 0 on failure.
static unsigned flush_pending(struct connection *connection) {
    size_t offset = 0;
    while (offset < connection->pending_count) {
        size_t written = 0;
        int result = SSL_write_ex(connection->ssl, connection->pending + offset, connection->pending_count - offset, &written);
        if (result == 1) {
            offset += written;
            continue;
        }
        unsigned waits = wait_for(connection, result);
        connection->pending_count -= offset;
        memmove(connection->pending, connection->pending + offset, connection->pending_count);
        return waits;
    }
    connection->pending_count = 0;
    return EPOLLIN;
}

/// Moves a connection on after a readiness. The events to wait for, or 0 to close it.
static unsigned serve(cbench_tls_server *server, struct connection *connection) {
    if (!connection->open) {
        int result = SSL_do_handshake(connection->ssl);
        if (result != 1) return wait_for(connection, result);
        connection->open = 1;
        __atomic_add_fetch(&server->handshakes, 1, __ATOMIC_RELAXED);
    }
    if (connection->pending_count > 0) {
        unsigned waits = flush_pending(connection);
        if (connection->pending_count > 0 || waits != EPOLLIN) return waits;
    }
    for (;;) {
        size_t count = 0;
        int result = SSL_read_ex(connection->ssl, server->buffer, READ_CAPACITY, &count);
        if (result != 1) return wait_for(connection, result);
        unsigned waits = echo(connection, server->buffer, count);
        if (connection->pending_count > 0 || waits != EPOLLIN) return waits;
    }
}

static void accept_all(cbench_tls_server *server) {
    for (;;) {
        int fd = accept4(server->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return; // EAGAIN (or a transient error: the listener is reported again)
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct connection *connection = calloc(1, sizeof *connection);
        SSL *ssl = SSL_new(server->context);
        BIO *bio = cbench_tls_bio_new(fd);
        if (connection == NULL || ssl == NULL || bio == NULL) {
            free(connection);
            SSL_free(ssl);
            BIO_free(bio);
            close(fd);
            continue;
        }
        SSL_set_bio(ssl, bio, bio);
        SSL_set_accept_state(ssl);
        connection->fd = fd;
        connection->ssl = ssl;
        connection->interest = EPOLLIN;
        connection->next = server->connections;
        if (server->connections) server->connections->previous = connection;
        server->connections = connection;
        struct epoll_event event = {.events = EPOLLIN, .data.ptr = connection};
        if (epoll_ctl(server->epoll_fd, EPOLL_CTL_ADD, fd, &event) != 0) {
            close_connection(server, connection);
            continue;
        }
        // The client's hello is often there already.
        unsigned waits = serve(server, connection);
        if (waits == 0 || set_interest(server, connection, waits) != 0) close_connection(server, connection);
    }
}

static void *run(void *argument) {
    cbench_tls_server *server = argument;
    struct epoll_event events[MAX_EVENTS];
    for (;;) {
        int ready = epoll_wait(server->epoll_fd, events, MAX_EVENTS, -1);
        if (ready < 0) {
            if (errno == EINTR) continue;
            perror("cbench_tls_server: epoll_wait");
            return NULL;
        }
        for (int i = 0; i < ready; i++) {
            void *data = events[i].data.ptr;
            if (data == &stop_marker) {
                while (server->connections) close_connection(server, server->connections);
                return NULL;
            }
            if (data == &listener_marker) {
                accept_all(server);
                continue;
            }
            struct connection *connection = data;
            unsigned waits = serve(server, connection);
            if (waits == 0 || set_interest(server, connection, waits) != 0) close_connection(server, connection);
        }
    }
}

static int listen_loopback(int *port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int one = 1;
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t length = sizeof address;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0
        || bind(fd, (struct sockaddr *)&address, sizeof address) != 0 || listen(fd, 4096) != 0
        || getsockname(fd, (struct sockaddr *)&address, &length) != 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(address.sin_port);
    return fd;
}

cbench_tls_server *cbench_tls_server_create(const char *certificate_path, const char *key_path) {
    cbench_tls_server *server = calloc(1, sizeof *server);
    if (server == NULL) return NULL;
    server->listen_fd = server->stop_fd = server->epoll_fd = -1;
    server->context = SSL_CTX_new(TLS_server_method());
    if (server->context == NULL || !cbench_tls_context_setup(server->context)
        || SSL_CTX_use_certificate_chain_file(server->context, certificate_path) != 1
        || SSL_CTX_use_PrivateKey_file(server->context, key_path, SSL_FILETYPE_PEM) != 1
        || SSL_CTX_check_private_key(server->context) != 1) {
        fprintf(stderr, "cbench_tls_server: the context could not be made\n");
        ERR_print_errors_fp(stderr);
        goto fail;
    }
    server->listen_fd = listen_loopback(&server->port);
    server->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    server->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (server->listen_fd < 0 || server->stop_fd < 0 || server->epoll_fd < 0) {
        perror("cbench_tls_server: socket set-up");
        goto fail;
    }
    struct epoll_event listen_event = {.events = EPOLLIN, .data.ptr = &listener_marker};
    struct epoll_event stop_event = {.events = EPOLLIN, .data.ptr = &stop_marker};
    if (epoll_ctl(server->epoll_fd, EPOLL_CTL_ADD, server->listen_fd, &listen_event) != 0
        || epoll_ctl(server->epoll_fd, EPOLL_CTL_ADD, server->stop_fd, &stop_event) != 0) {
        perror("cbench_tls_server: epoll_ctl");
        goto fail;
    }
    if (pthread_create(&server->thread, NULL, run, server) != 0) goto fail;
    pthread_setname_np(server->thread, "bench.tls.c");
    if (pthread_getcpuclockid(server->thread, &server->clock) != 0) {
        cbench_tls_server_destroy(server);
        return NULL;
    }
    return server;
fail:
    if (server->epoll_fd >= 0) close(server->epoll_fd);
    if (server->stop_fd >= 0) close(server->stop_fd);
    if (server->listen_fd >= 0) close(server->listen_fd);
    SSL_CTX_free(server->context);
    free(server);
    return NULL;
}

int cbench_tls_server_port(const cbench_tls_server *server) { return server->port; }

int cbench_tls_server_cpu_clock(const cbench_tls_server *server) { return (int)server->clock; }

long long cbench_tls_server_handshakes(const cbench_tls_server *server) {
    return __atomic_load_n(&server->handshakes, __ATOMIC_RELAXED);
}

void cbench_tls_server_destroy(cbench_tls_server *server) {
    uint64_t one = 1;
    if (write(server->stop_fd, &one, sizeof one) != sizeof one) perror("cbench_tls_server: stop");
    pthread_join(server->thread, NULL);
    close(server->epoll_fd);
    close(server->stop_fd);
    close(server->listen_fd);
    SSL_CTX_free(server->context);
    free(server);
}
