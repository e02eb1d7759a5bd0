// CLOCK_MONOTONIC for the C floors and the load generator (comparable with Swift's
// ProcessCounters.nanoseconds()). No system headers: see cbench_sockets.h.
#ifndef PORTRUNLOOP_CBENCH_CLOCK_H
#define PORTRUNLOOP_CBENCH_CLOCK_H

/// CLOCK_MONOTONIC in nanoseconds. Thread-safety: any thread.
long long cbench_monotonic_ns(void);

#endif
