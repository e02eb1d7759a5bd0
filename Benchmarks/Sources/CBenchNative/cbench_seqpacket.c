#define _GNU_SOURCE
#include "cbench_seqpacket.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum { MAX_MESSAGE = 65536, BATCH = 64 };

static int make_address(const char *path, struct sockaddr_un *address) {
    memset(address, 0, sizeof *address);
    address->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof address->sun_path) { errno = ENAMETOOLONG; return -1; }
    strcpy(address->sun_path, path);
    return 0;
}

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

// Handles what one connection has ready (at most BATCH messages). Returns -1 once it is closed.
static int serve_connection(int fd) {
    static char buffer[MAX_MESSAGE];
    for (int i = 0; i < BATCH; i++) {
        ssize_t n = recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
        if (n < 0) return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -1;
        if (n == 0) return -1;
        if (buffer[0] == 'E') {
            if (send(fd, buffer, (size_t)n, MSG_NOSIGNAL) < 0) return -1;
        } else if (buffer[0] == 'F') {
            if (send(fd, "F", 1, MSG_NOSIGNAL) < 0) return -1;
        }
    }
    return 0;
}

int cbench_seqpacket_serve(const char *path, int ready_fd) {
    struct sockaddr_un address;
    if (make_address(path, &address) != 0) return -1;
    unlink(path);
    int listener = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (listener < 0) return -1;
    if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 64) != 0) return -1;
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    if (epoll < 0) return -1;
    struct epoll_event event = { .events = EPOLLIN, .data.fd = listener };
    if (epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &event) != 0) return -1;
    if (ready_fd >= 0) (void)!write(ready_fd, "ready\n", 6);
    struct epoll_event ready[64];
    for (;;) {
        int n = epoll_wait(epoll, ready, 64, -1);
        if (n < 0) { if (errno == EINTR) continue; return -1; }
        for (int i = 0; i < n; i++) {
            int fd = ready[i].data.fd;
            if (fd == listener) {
                int connection = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
                if (connection < 0) continue;
                struct epoll_event added = { .events = EPOLLIN, .data.fd = connection };
                if (epoll_ctl(epoll, EPOLL_CTL_ADD, connection, &added) != 0) close(connection);
            } else if (serve_connection(fd) != 0) {
                epoll_ctl(epoll, EPOLL_CTL_DEL, fd, NULL);
                close(fd);
            }
        }
    }
}

int cbench_seqpacket_connect(const char *path) {
    struct sockaddr_un address;
    if (make_address(path, &address) != 0) return -1;
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int cbench_seqpacket_round_trips(int fd, int count, int size, long long *latencies_ns) {
    char message[MAX_MESSAGE], answer[MAX_MESSAGE];
    if (size < 1 || size > MAX_MESSAGE) { errno = EINVAL; return -1; }
    memset(message, 'x', (size_t)size);
    message[0] = 'E';
    for (int i = 0; i < count; i++) {
        long long start = latencies_ns ? now_ns() : 0;
        if (send(fd, message, (size_t)size, MSG_NOSIGNAL) != size) return -1;
        ssize_t n = recv(fd, answer, sizeof answer, 0);
        if (n != size) { if (n >= 0) errno = EPROTO; return -1; }
        if (latencies_ns) latencies_ns[i] = now_ns() - start;
    }
    return 0;
}

int cbench_seqpacket_burst(int fd, int count, int size) {
    char message[MAX_MESSAGE], answer[8];
    if (size < 1 || size > MAX_MESSAGE) { errno = EINVAL; return -1; }
    memset(message, 'x', (size_t)size);
    message[0] = 'S';
    for (int i = 0; i < count; i++) {
        if (send(fd, message, (size_t)size, MSG_NOSIGNAL) != size) return -1;
    }
    if (send(fd, "F", 1, MSG_NOSIGNAL) != 1) return -1;
    ssize_t n = recv(fd, answer, sizeof answer, 0);
    if (n != 1 || answer[0] != 'F') { if (n >= 0) errno = EPROTO; return -1; }
    return 0;
}
