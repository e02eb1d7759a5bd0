#include "cbench_libevent_timer_churn.h"

#include <event2/event.h>
#include <stdlib.h>

struct cbench_libevent_timer_churn {
    struct event_base *base;
    struct event *due; // this turn's zero-delay timer
    long turns_left;
    int timers_per_turn;
    long timers;
    int failed;
};

static void on_never(evutil_socket_t fd, short what, void *context) {
    (void)fd;
    (void)what;
    (void)context;
}

static void on_due(evutil_socket_t fd, short what, void *context);

static int schedule_turn(cbench_libevent_timer_churn *churn) {
    static const struct timeval now = {0, 0};
    churn->due = evtimer_new(churn->base, on_due, churn);
    return churn->due && evtimer_add(churn->due, &now) == 0;
}

static void on_due(evutil_socket_t fd, short what, void *context) {
    (void)fd;
    (void)what;
    static const struct timeval thirty_seconds = {30, 0};
    cbench_libevent_timer_churn *churn = context;
    event_free(churn->due);
    churn->due = NULL;
    churn->timers++;
    for (int i = 1; i < churn->timers_per_turn; i++) {
        struct event *timeout = evtimer_new(churn->base, on_never, NULL);
        if (!timeout || evtimer_add(timeout, &thirty_seconds) != 0) {
            churn->failed = 1;
            event_base_loopbreak(churn->base);
            return;
        }
        event_del(timeout);
        event_free(timeout);
        churn->timers++;
    }
    if (--churn->turns_left == 0) {
        event_base_loopbreak(churn->base);
    } else if (!schedule_turn(churn)) {
        churn->failed = 1;
        event_base_loopbreak(churn->base);
    }
}

cbench_libevent_timer_churn *cbench_libevent_timer_churn_create(void) {
    cbench_libevent_timer_churn *churn = calloc(1, sizeof *churn);
    if (!churn) return NULL;
    struct event_config *config = event_config_new();
    if (config) {
        event_config_set_flag(config, EVENT_BASE_FLAG_NOLOCK);
        churn->base = event_base_new_with_config(config);
        event_config_free(config);
    }
    if (!churn->base) {
        free(churn);
        return NULL;
    }
    return churn;
}

long cbench_libevent_timer_churn_run(cbench_libevent_timer_churn *churn, long turns, int timers_per_turn) {
    if (turns <= 0 || timers_per_turn <= 0) return 0;
    churn->turns_left = turns;
    churn->timers_per_turn = timers_per_turn;
    churn->timers = 0;
    churn->failed = 0;
    if (!schedule_turn(churn)) return -1;
    int result = event_base_loop(churn->base, 0);
    if (churn->due) { // left only by a failed turn
        event_free(churn->due);
        churn->due = NULL;
    }
    return result == -1 || churn->failed ? -1 : churn->timers;
}

void cbench_libevent_timer_churn_destroy(cbench_libevent_timer_churn *churn) {
    if (!churn) return;
    if (churn->due) event_free(churn->due);
    event_base_free(churn->base);
    free(churn);
}
