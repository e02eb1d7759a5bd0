// The libevent floor of the timer churn (a connection timeout per request): on a bare event_base
// (EVENT_BASE_FLAG_NOLOCK), each turn is one zero-delay timer that fires; its callback schedules
// `timers_per_turn - 1` timers 30 s away and cancels each at once (evtimer_new, evtimer_add,
// event_del, event_free), then schedules the next turn's zero-delay timer.
// No system headers: see cbench_sockets.h.
#ifndef PORTRUNLOOP_CBENCH_LIBEVENT_TIMER_CHURN_H
#define PORTRUNLOOP_CBENCH_LIBEVENT_TIMER_CHURN_H

/// An event base for the churn. Thread-safety: create, run and destroy it on one thread at a time.
typedef struct cbench_libevent_timer_churn cbench_libevent_timer_churn;

/// Makes the base. NULL on failure. Thread-safety: any thread.
cbench_libevent_timer_churn *cbench_libevent_timer_churn_create(void);

/// Runs `turns` turns of `timers_per_turn` timers (one fires, the others are cancelled). Returns
/// the timers handled (`turns * timers_per_turn`), or -1. Thread-safety: the owning thread.
long cbench_libevent_timer_churn_run(cbench_libevent_timer_churn *churn, long turns, int timers_per_turn);

/// Frees the base. Thread-safety: the owning thread, once.
void cbench_libevent_timer_churn_destroy(cbench_libevent_timer_churn *churn);

#endif
