#define _GNU_SOURCE
#include "cbench_epoll_ping_pong.h"
#include "cbench_clock.h"
#include "cbench_sockets.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

struct cbench_epoll_ping_pong {
    int epoll_fd;
    int ends[2];
};

cbench_epoll_ping_pong *cbench_epoll_ping_pong_create(void) {
    cbench_epoll_ping_pong *ping_pong = calloc(1, sizeof *ping_pong);
    if (!ping_pong) return NULL;
    ping_pong->epoll_fd = -1;
    ping_pong->ends[0] = ping_pong->ends[1] = -1;
    if (cbench_socketpair_nonblocking(ping_pong->ends) != 0) goto fail;
    ping_pong->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (ping_pong->epoll_fd < 0) goto fail;
    for (int i = 0; i < 2; i++) {
        struct epoll_event event = {.events = EPOLLIN, .data.fd = ping_pong->ends[i]};
        if (epoll_ctl(ping_pong->epoll_fd, EPOLL_CTL_ADD, ping_pong->ends[i], &event) != 0) goto fail;
    }
    return ping_pong;
fail:;
    int saved = errno;
    cbench_epoll_ping_pong_destroy(ping_pong);
    errno = saved;
    return NULL;
}

long cbench_epoll_ping_pong_run(cbench_epoll_ping_pong *ping_pong, long events, long long deadline_ns) {
    unsigned char byte = 1;
    if (events <= 0) return 0;
    if (write(ping_pong->ends[0], &byte, 1) != 1) return -1;
    long handled = 0;
    struct epoll_event ready[64];
    for (;;) {
        int count = epoll_wait(ping_pong->epoll_fd, ready, 64, -1);
        if (count < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        for (int i = 0; i < count; i++) {
            int fd = ready[i].data.fd;
            if (read(fd, &byte, 1) != 1) continue; // spurious: nothing to handle
            handled++;
            if (handled == events) return handled;
            if ((handled & 63) == 0 && deadline_ns != 0 && cbench_monotonic_ns() >= deadline_ns) return handled;
            if (write(fd, &byte, 1) != 1) return -1;
        }
    }
}

void cbench_epoll_ping_pong_destroy(cbench_epoll_ping_pong *ping_pong) {
    if (!ping_pong) return;
    if (ping_pong->epoll_fd >= 0) close(ping_pong->epoll_fd);
    for (int i = 0; i < 2; i++) {
        if (ping_pong->ends[i] >= 0) close(ping_pong->ends[i]);
    }
    free(ping_pong);
}
