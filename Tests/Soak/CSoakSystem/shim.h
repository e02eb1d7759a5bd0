// The one Linux call the soak tool needs that Swift cannot make directly (prctl is variadic): a
// process started by the soak dies with it, however the soak ends (a crash included), so no
// daemon or child outlives a run.
#ifndef PORTRUNLOOP_CSOAKSYSTEM_SHIM_H
#define PORTRUNLOOP_CSOAKSYSTEM_SHIM_H

#include <signal.h>
#include <sys/prctl.h>

/// `prctl(PR_SET_PDEATHSIG, SIGKILL)`: the calling process is sent SIGKILL when the thread that
/// started it exits (the soak starts every child from its main thread). Survives `execve`. 0, or
/// -1 with errno set.
static inline int soak_die_with_parent(void) {
    return prctl(PR_SET_PDEATHSIG, SIGKILL, 0UL, 0UL, 0UL);
}

#endif
