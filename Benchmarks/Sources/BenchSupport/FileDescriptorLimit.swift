#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The process's descriptor limit (`RLIMIT_NOFILE`), raised as far as allowed for the scenarios
/// that register tens of thousands of idle fd sources.
///
/// Thread-safety: stateless; any thread.
public enum FileDescriptorLimit {
    /// Raises the limit as far as the process may and returns the soft limit then in force: first
    /// both limits to `/proc/sys/fs/nr_open` (needs `CAP_SYS_RESOURCE`, even as root in a
    /// container it may be refused), else the soft limit to the hard one.
    ///
    /// Thread-safety: any thread.
    @discardableResult
    public static func raise() -> Int {
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return 1024 }
        if let nrOpen = kernelMaximum(), nrOpen > limit.rlim_max {
            var wanted = rlimit(rlim_cur: nrOpen, rlim_max: nrOpen)
            if setrlimit(resource, &wanted) == 0 { return Int(nrOpen) }
        }
        if limit.rlim_cur < limit.rlim_max {
            var wanted = rlimit(rlim_cur: limit.rlim_max, rlim_max: limit.rlim_max)
            if setrlimit(resource, &wanted) == 0 { return Int(limit.rlim_max) }
        }
        return Int(limit.rlim_cur)
    }

    /// How many descriptors the process has open now (entries of `/proc/self/fd`).
    ///
    /// Thread-safety: any thread.
    public static func openCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
    }

    /// `/proc/sys/fs/nr_open`: the most any process may be allowed.
    private static func kernelMaximum() -> rlim_t? {
        guard let text = try? String(contentsOfFile: "/proc/sys/fs/nr_open", encoding: .utf8) else { return nil }
        return rlim_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
