#if canImport(Glibc)
import Glibc
#endif

/// Process-wide counters the scenarios sample around each measurement.
///
/// Thread-safety: stateless; any thread.
public enum ProcessCounters {
    /// Voluntary plus involuntary context switches of the whole process so far
    /// (`getrusage(RUSAGE_SELF)`: `ru_nvcsw + ru_nivcsw`, summed over all its threads). This is the
    /// custom "contextSwitches" metric: package-benchmark's built-in one is not supported on Linux.
    /// (Glibc's `getrusage` is callable straight from Swift; no C shim needed or wanted.)
    ///
    /// Thread-safety: any thread.
    public static func contextSwitches() -> Int {
        var usage = rusage()
        let rc = getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        precondition(rc == 0, "getrusage failed, errno \(errno)")
        return usage.ru_nvcsw + usage.ru_nivcsw
    }

    /// `CLOCK_MONOTONIC` in nanoseconds; comparable across threads and CPUs.
    ///
    /// Thread-safety: any thread.
    @inline(__always)
    public static func nanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// ``nanoseconds()`` `duration` from now: a deadline on the same clock.
    ///
    /// Thread-safety: any thread.
    public static func deadline(after duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return nanoseconds() &+ UInt64(seconds) &* 1_000_000_000 &+ UInt64(attoseconds / 1_000_000_000)
    }

    /// CPU time of the whole process so far (`CLOCK_PROCESS_CPUTIME_ID`: every thread), in
    /// nanoseconds.
    ///
    /// Thread-safety: any thread.
    public static func cpuNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// The CPU-time clock of the calling thread (`pthread_getcpuclockid`), readable from any thread
    /// with ``cpuNanoseconds(of:)`` while the thread lives: how the echo scenarios charge a
    /// server's own threads, without the clients'.
    ///
    /// Thread-safety: any thread (names the caller's).
    public static func currentThreadCPUClock() -> clockid_t {
        var clock = clockid_t()
        let rc = pthread_getcpuclockid(pthread_self(), &clock)
        precondition(rc == 0, "pthread_getcpuclockid failed, error \(rc)")
        return clock
    }

    /// CPU time so far of the thread whose clock ``currentThreadCPUClock()`` returned, ns.
    ///
    /// Thread-safety: any thread.
    public static func cpuNanoseconds(of clock: clockid_t) -> UInt64 {
        var ts = timespec()
        clock_gettime(clock, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// Sleeps the calling thread until `CLOCK_MONOTONIC` reaches `deadline` (ns; see
    /// ``nanoseconds()``): `clock_nanosleep` to an absolute time, so that pacing does not drift
    /// and does not spin. Returns at once for a deadline already past.
    ///
    /// Thread-safety: any thread (sleeps the caller).
    public static func sleep(untilNanoseconds deadline: UInt64) {
        var request = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &request, nil) == EINTR {}
    }

    /// Sleeps the calling thread for `milliseconds` (the "idle" phase of first-send-after-idle).
    ///
    /// Thread-safety: any thread (sleeps the caller).
    public static func sleep(milliseconds: Int) {
        var request = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
    }
}
