#include "cbench_libevent_timer_lateness.h"
#include "cbench_clock.h"

#include <event2/event.h>
#include <stdlib.h>

struct cbench_libevent_timer_lateness {
    struct event_base *base;
    struct event *timer;
    long long fired_at;
};

static void on_fire(evutil_socket_t fd, short what, void *context) {
    (void)fd;
    (void)what;
    ((cbench_libevent_timer_lateness *)context)->fired_at = cbench_monotonic_ns();
}

cbench_libevent_timer_lateness *cbench_libevent_timer_lateness_create(void) {
    cbench_libevent_timer_lateness *lateness = calloc(1, sizeof *lateness);
    if (!lateness) return NULL;
    struct event_config *config = event_config_new();
    if (config) {
        event_config_set_flag(config, EVENT_BASE_FLAG_NOLOCK);
        lateness->base = event_base_new_with_config(config);
        event_config_free(config);
    }
    if (lateness->base) lateness->timer = evtimer_new(lateness->base, on_fire, lateness);
    if (!lateness->timer) {
        cbench_libevent_timer_lateness_destroy(lateness);
        return NULL;
    }
    return lateness;
}

long long cbench_libevent_timer_lateness_sample(cbench_libevent_timer_lateness *lateness, long long delay_ns) {
    struct timeval delay = {(long)(delay_ns / 1000000000LL), (long)((delay_ns % 1000000000LL) / 1000)};
    long long due = cbench_monotonic_ns() + delay_ns;
    lateness->fired_at = 0;
    if (evtimer_add(lateness->timer, &delay) != 0) return -1;
    while (lateness->fired_at == 0) {
        if (event_base_loop(lateness->base, EVLOOP_ONCE) < 0) return -1;
    }
    return lateness->fired_at - due;
}

void cbench_libevent_timer_lateness_destroy(cbench_libevent_timer_lateness *lateness) {
    if (!lateness) return;
    if (lateness->timer) event_free(lateness->timer);
    if (lateness->base) event_base_free(lateness->base);
    free(lateness);
}
