#include "cbench_libevent_ping_pong.h"
#include "cbench_clock.h"
#include "cbench_sockets.h"

#include <event2/event.h>
#include <stdlib.h>
#include <unistd.h>

struct cbench_libevent_ping_pong {
    struct event_base *base;
    int ends[2];
    struct event *end_events[2];
    struct event **idle;
    long idle_count;
    long idle_capacity;
    long handled;
    long target;
    long long deadline_ns;
    int failed;
};

static void on_readable(evutil_socket_t fd, short what, void *context) {
    (void)what;
    cbench_libevent_ping_pong *ping_pong = context;
    unsigned char byte;
    if (read(fd, &byte, 1) != 1) return; // spurious
    ping_pong->handled++;
    if (ping_pong->handled == ping_pong->target
        || ((ping_pong->handled & 63) == 0 && ping_pong->deadline_ns != 0
            && cbench_monotonic_ns() >= ping_pong->deadline_ns)) {
        event_base_loopbreak(ping_pong->base);
        return;
    }
    if (write(fd, &byte, 1) != 1) {
        ping_pong->failed = 1;
        event_base_loopbreak(ping_pong->base);
    }
}

static void on_idle(evutil_socket_t fd, short what, void *context) {
    (void)fd;
    (void)what;
    (void)context;
}

cbench_libevent_ping_pong *cbench_libevent_ping_pong_create(void) {
    cbench_libevent_ping_pong *ping_pong = calloc(1, sizeof *ping_pong);
    if (!ping_pong) return NULL;
    ping_pong->ends[0] = ping_pong->ends[1] = -1;
    struct event_config *config = event_config_new();
    if (!config) goto fail;
    event_config_set_flag(config, EVENT_BASE_FLAG_NOLOCK);
    ping_pong->base = event_base_new_with_config(config);
    event_config_free(config);
    if (!ping_pong->base) goto fail;
    if (cbench_socketpair_nonblocking(ping_pong->ends) != 0) goto fail;
    for (int i = 0; i < 2; i++) {
        ping_pong->end_events[i] = event_new(ping_pong->base, ping_pong->ends[i], EV_READ | EV_PERSIST, on_readable, ping_pong);
        if (!ping_pong->end_events[i] || event_add(ping_pong->end_events[i], NULL) != 0) goto fail;
    }
    return ping_pong;
fail:
    cbench_libevent_ping_pong_destroy(ping_pong);
    return NULL;
}

static int reserve_idle(cbench_libevent_ping_pong *ping_pong, long more) {
    if (ping_pong->idle_count + more <= ping_pong->idle_capacity) return 1;
    long capacity = ping_pong->idle_count + more;
    struct event **grown = realloc(ping_pong->idle, (size_t)capacity * sizeof *grown);
    if (!grown) return 0;
    ping_pong->idle = grown;
    ping_pong->idle_capacity = capacity;
    return 1;
}

long cbench_libevent_ping_pong_add_idle_fds(cbench_libevent_ping_pong *ping_pong, const int *fds, long count) {
    if (count <= 0 || !reserve_idle(ping_pong, count)) return 0;
    long added = 0;
    for (long i = 0; i < count; i++) {
        struct event *event = event_new(ping_pong->base, fds[i], EV_READ | EV_PERSIST, on_idle, NULL);
        if (!event) break;
        if (event_add(event, NULL) != 0) {
            event_free(event);
            break;
        }
        ping_pong->idle[ping_pong->idle_count++] = event;
        added++;
    }
    return added;
}

long cbench_libevent_ping_pong_add_idle_timers(cbench_libevent_ping_pong *ping_pong, long count, long seconds) {
    if (count <= 0 || !reserve_idle(ping_pong, count)) return 0;
    struct timeval timeout = {.tv_sec = seconds, .tv_usec = 0};
    long added = 0;
    for (long i = 0; i < count; i++) {
        struct event *event = evtimer_new(ping_pong->base, on_idle, NULL);
        if (!event) break;
        if (evtimer_add(event, &timeout) != 0) {
            event_free(event);
            break;
        }
        ping_pong->idle[ping_pong->idle_count++] = event;
        added++;
    }
    return added;
}

long cbench_libevent_ping_pong_run(cbench_libevent_ping_pong *ping_pong, long events, long long deadline_ns) {
    if (events <= 0) return 0;
    ping_pong->handled = 0;
    ping_pong->target = events;
    ping_pong->deadline_ns = deadline_ns;
    ping_pong->failed = 0;
    unsigned char byte = 1;
    if (write(ping_pong->ends[0], &byte, 1) != 1) return -1;
    if (event_base_loop(ping_pong->base, 0) == -1 || ping_pong->failed) return -1;
    return ping_pong->handled;
}

void cbench_libevent_ping_pong_destroy(cbench_libevent_ping_pong *ping_pong) {
    if (!ping_pong) return;
    for (long i = 0; i < ping_pong->idle_count; i++) event_free(ping_pong->idle[i]);
    free(ping_pong->idle);
    for (int i = 0; i < 2; i++) {
        if (ping_pong->end_events[i]) event_free(ping_pong->end_events[i]);
        if (ping_pong->ends[i] >= 0) close(ping_pong->ends[i]);
    }
    if (ping_pong->base) event_base_free(ping_pong->base);
    free(ping_pong);
}
