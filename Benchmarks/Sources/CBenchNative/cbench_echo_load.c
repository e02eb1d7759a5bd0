#define _GNU_SOURCE
#include "cbench_echo_load.h"
#include "cbench_clock.h"
#include "cbench_sockets.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define DRAIN_NS 2000000000LL
#define MAX_PAYLOAD 4096

struct connection {
    int fd;
    int received;
    long long sent_at;
};

struct client {
    const struct cbench_echo_load *load;
    int epoll_fd;
    struct connection *connections;
    int count;
    struct connection **idle; // paced: the connections with no request outstanding (capacity `count`)
    // Per sample:
    long quota;
    long long start_ns;
    long long cap_ns;
    long long interval_ns; // paced: one request per interval from this thread; 0: closed loop
    long long *latencies; // capacity `quota`
    long completed;
    int failed;
};

struct cbench_echo_load {
    int threads;
    int payload;
    unsigned char request[MAX_PAYLOAD];
    struct client *clients;
};

static int connect_one(int port) {
    int fd = cbench_tcp_connect_loopback(port, 0);
    if (fd < 0) return -1;
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

cbench_echo_load *cbench_echo_load_create(int port, int connections, int threads, int payload) {
    if (threads <= 0 || connections < threads || payload <= 0 || payload > MAX_PAYLOAD) {
        errno = EINVAL;
        return NULL;
    }
    cbench_echo_load *load = calloc(1, sizeof *load);
    if (!load) return NULL;
    load->threads = threads;
    load->payload = payload;
    memset(load->request, 'x', sizeof load->request);
    load->clients = calloc((size_t)threads, sizeof *load->clients);
    if (!load->clients) goto fail;
    for (int t = 0; t < threads; t++) load->clients[t].epoll_fd = -1;
    for (int t = 0; t < threads; t++) {
        struct client *client = &load->clients[t];
        client->load = load;
        int share = connections / threads + (t < connections % threads ? 1 : 0);
        client->connections = calloc((size_t)share, sizeof *client->connections);
        client->idle = calloc((size_t)share, sizeof *client->idle);
        if (!client->connections || !client->idle) goto fail;
        client->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
        if (client->epoll_fd < 0) goto fail;
        for (int i = 0; i < share; i++) {
            struct connection *connection = &client->connections[i];
            connection->fd = connect_one(port);
            if (connection->fd < 0) goto fail;
            client->count++;
            struct epoll_event event = {.events = EPOLLIN, .data.ptr = connection};
            if (epoll_ctl(client->epoll_fd, EPOLL_CTL_ADD, connection->fd, &event) != 0) goto fail;
        }
    }
    return load;
fail:;
    int saved = errno;
    cbench_echo_load_destroy(load);
    errno = saved;
    return NULL;
}

static int send_request(struct client *client, struct connection *connection, long long now) {
    connection->received = 0;
    connection->sent_at = now;
    ssize_t written = write(connection->fd, client->load->request, (size_t)client->load->payload);
    return written == client->load->payload; // a fresh request on an idle connection never blocks
}

// Waits up to `wait_ns` for echoes: how many connections are ready (0 also when interrupted), or
// -1 (the client failed) on an error or when none came for two seconds after `stop_issuing`.
static int wait_for_echoes(struct client *client, struct epoll_event *ready, long long wait_ns, long long stop_issuing) {
    struct timespec timeout = {.tv_sec = wait_ns / 1000000000LL, .tv_nsec = wait_ns % 1000000000LL};
    int count = epoll_pwait2(client->epoll_fd, ready, 256, &timeout, NULL);
    if (count < 0 && errno == EINTR) return 0;
    if (count < 0 || (count == 0 && cbench_monotonic_ns() > stop_issuing + DRAIN_NS)) {
        client->failed = 1;
        return -1;
    }
    return count;
}

// Reads what `connection` has of its echo: 1 once the whole echo is in (its latency recorded, the
// time it came in `*now`), 0 when more is to come, -1 (the client failed) when the connection
// closed or failed or sent more than was asked.
static int take_echo(struct client *client, struct connection *connection, long long *now) {
    unsigned char buffer[MAX_PAYLOAD];
    ssize_t got = read(connection->fd, buffer, sizeof buffer);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
    if (got <= 0 || connection->received + got > client->load->payload) {
        client->failed = 1;
        return -1;
    }
    connection->received += (int)got;
    if (connection->received < client->load->payload) return 0;
    *now = cbench_monotonic_ns();
    client->latencies[client->completed++] = *now - connection->sent_at;
    return 1;
}

// Paced: request k of this thread is due at start + k × interval and goes out on a connection
// with nothing outstanding (all busy: it waits for one). Its latency runs from when it was due,
// not from when it went out, so a server that falls behind is charged for the requests it kept
// waiting (no coordinated omission). The thread sleeps in epoll_pwait2 until the next is due
// (timer slack 1 µs) or an echo comes.
static void *client_main_paced(struct client *client) {
    struct epoll_event ready[256];
    (void)prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
    int idle_count = 0;
    for (int i = 0; i < client->count; i++) client->idle[idle_count++] = &client->connections[i];
    long issued = 0, outstanding = 0;
    long long due = client->start_ns;
    const long long stop_issuing = client->start_ns + client->cap_ns;
    for (;;) {
        long long now = cbench_monotonic_ns();
        while (issued < client->quota && due < stop_issuing && due <= now && idle_count > 0) {
            if (!send_request(client, client->idle[--idle_count], due)) {
                client->failed = 1;
                return NULL;
            }
            issued++;
            outstanding++;
            due += client->interval_ns;
        }
        int issuing = issued < client->quota && due < stop_issuing;
        if (!issuing && outstanding == 0) return NULL;
        long long wait_ns = issuing && idle_count > 0 ? due - now : 100000000LL;
        int count = wait_for_echoes(client, ready, wait_ns > 0 ? wait_ns : 0, stop_issuing);
        if (count < 0) return NULL;
        for (int i = 0; i < count; i++) {
            int taken = take_echo(client, ready[i].data.ptr, &now);
            if (taken < 0) return NULL;
            if (taken == 0) continue;
            outstanding--;
            client->idle[idle_count++] = ready[i].data.ptr;
        }
    }
}

static void *client_main(void *context) {
    struct client *client = context;
    if (client->interval_ns > 0) return client_main_paced(client);
    struct epoll_event ready[256];
    long issued = 0, outstanding = 0;
    long long now = cbench_monotonic_ns();
    for (int i = 0; i < client->count && issued < client->quota; i++) {
        if (!send_request(client, &client->connections[i], now)) {
            client->failed = 1;
            return NULL;
        }
        issued++;
        outstanding++;
    }
    const long long stop_issuing = client->start_ns + client->cap_ns;
    while (outstanding > 0) {
        int count = wait_for_echoes(client, ready, 100000000LL, stop_issuing);
        if (count < 0) return NULL;
        for (int i = 0; i < count; i++) {
            struct connection *connection = ready[i].data.ptr;
            int taken = take_echo(client, connection, &now);
            if (taken < 0) return NULL;
            if (taken == 0) continue;
            outstanding--;
            if (issued < client->quota && now < stop_issuing) {
                if (!send_request(client, connection, now)) {
                    client->failed = 1;
                    return NULL;
                }
                issued++;
                outstanding++;
            }
        }
    }
    return NULL;
}

long cbench_echo_load_run(cbench_echo_load *load, long requests, long long cap_ns, long rate, long long *latencies) {
    long long start = cbench_monotonic_ns();
    long offset = 0;
    for (int t = 0; t < load->threads; t++) {
        struct client *client = &load->clients[t];
        client->quota = requests / load->threads + (t < requests % load->threads ? 1 : 0);
        client->start_ns = start;
        client->cap_ns = cap_ns;
        client->interval_ns = rate > 0 ? 1000000000LL * load->threads / rate : 0;
        client->latencies = latencies + offset;
        client->completed = 0;
        client->failed = 0;
        offset += client->quota;
    }
    pthread_t threads[load->threads];
    int started = 0;
    for (; started < load->threads; started++) {
        if (pthread_create(&threads[started], NULL, client_main, &load->clients[started]) != 0) break;
    }
    for (int t = 0; t < started; t++) pthread_join(threads[t], NULL);
    if (started < load->threads) return -1;
    long completed = 0;
    for (int t = 0; t < load->threads; t++) {
        struct client *client = &load->clients[t];
        if (client->failed) return -1;
        // Compact: each thread wrote from the start of its own slice.
        if (client->latencies != latencies + completed) {
            memmove(latencies + completed, client->latencies, (size_t)client->completed * sizeof *latencies);
        }
        completed += client->completed;
    }
    return completed;
}

void cbench_echo_load_destroy(cbench_echo_load *load) {
    if (!load) return;
    if (load->clients) {
        for (int t = 0; t < load->threads; t++) {
            struct client *client = &load->clients[t];
            for (int i = 0; i < client->count; i++) close(client->connections[i].fd);
            free(client->connections);
            free(client->idle);
            if (client->epoll_fd >= 0) close(client->epoll_fd);
        }
        free(load->clients);
    }
    free(load);
}
