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
    public static func contextSwitches() -> Int {
        var usage = rusage()
        let rc = getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        precondition(rc == 0, "getrusage failed, errno \(errno)")
        return usage.ru_nvcsw + usage.ru_nivcsw
    }

    /// `CLOCK_MONOTONIC` in nanoseconds; comparable across threads and CPUs.
    @inline(__always)
    public static func nanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// Sleeps the calling thread for `milliseconds` (the "idle" phase of first-send-after-idle).
    public static func sleep(milliseconds: Int) {
        var request = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
    }
}
