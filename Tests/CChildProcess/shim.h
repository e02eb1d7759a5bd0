// The Linux calls the test and soak child processes need that Swift cannot make directly:
// posix_spawn's close-from file action and pipe2 (declared by glibc only under _GNU_SOURCE), so a
// child starts with standard input, output and error and nothing else, whatever other threads
// opened meanwhile, and its pipe reaches no other child; and prctl (variadic), so a child of the
// soak dies with it however the soak ends.
#ifndef PORTRUNLOOP_CCHILDPROCESS_SHIM_H
#define PORTRUNLOOP_CCHILDPROCESS_SHIM_H

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>

/// glibc 2.34 and later (declared in <spawn.h> under _GNU_SOURCE only).
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
/// Declared in <unistd.h> under _GNU_SOURCE only.
extern int pipe2(int fds[2], int flags);

/// A pipe whose two ends are close-on-exec from the start (no other thread's spawn can inherit
/// them). 0, or -1 with errno set.
static inline int child_process_pipe(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

/// Adds to `actions` the closing, in the child, of every descriptor from 3 up: executed at the
/// spawn, so it also closes what another thread opened after the actions were made. 0 or an errno.
static inline int child_process_close_inherited(posix_spawn_file_actions_t *actions) {
    return posix_spawn_file_actions_addclosefrom_np(actions, 3);
}

/// `prctl(PR_SET_PDEATHSIG, SIGKILL)`: the calling process is sent SIGKILL when the thread that
/// started it exits (the soak starts every child from its main thread). Survives `execve`. 0, or
/// -1 with errno set.
static inline int child_process_die_with_parent(void) {
    return prctl(PR_SET_PDEATHSIG, SIGKILL, 0UL, 0UL, 0UL);
}

#endif
