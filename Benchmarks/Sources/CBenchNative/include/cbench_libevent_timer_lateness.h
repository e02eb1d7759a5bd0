// The libevent floor of the timer lateness: on a bare event_base (EVENT_BASE_FLAG_NOLOCK), one
// evtimer `delay_ns` ahead, waited for with event_base_loop(EVLOOP_ONCE); how late its callback
// ran. No system headers: see cbench_sockets.h.
#ifndef PORTRUNLOOP_CBENCH_LIBEVENT_TIMER_LATENESS_H
#define PORTRUNLOOP_CBENCH_LIBEVENT_TIMER_LATENESS_H

/// An event base for the lateness samples. Thread-safety: create, use and destroy it on one thread.
typedef struct cbench_libevent_timer_lateness cbench_libevent_timer_lateness;

/// Makes the base. NULL on failure. Thread-safety: any thread.
cbench_libevent_timer_lateness *cbench_libevent_timer_lateness_create(void);

/// Schedules one timer `delay_ns` from now, runs the base until it fired, and returns how many
/// nanoseconds after its due time (CLOCK_MONOTONIC) the callback ran, or -1. Thread-safety: the
/// owning thread.
long long cbench_libevent_timer_lateness_sample(cbench_libevent_timer_lateness *lateness, long long delay_ns);

/// Frees the base. Thread-safety: the owning thread, once.
void cbench_libevent_timer_lateness_destroy(cbench_libevent_timer_lateness *lateness);

#endif
