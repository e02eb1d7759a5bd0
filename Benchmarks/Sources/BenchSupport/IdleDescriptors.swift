#if canImport(Glibc)
import Glibc
#endif
import CBenchSupport

/// Descriptors that never become readable (eventfds nobody writes), to register as idle fd sources
/// beside a ping-pong. Makes as many as asked for if the descriptor limit allows (raising it with
/// ``FileDescriptorLimit/raise()`` first), otherwise as many as it can while leaving
/// ``reserve`` free for the loops and sockets of the scenario; ``count`` says how many.
///
/// Thread-safety: `Sendable`; immutable after init; ``close()`` once, after every source
/// watching them was cancelled.
public final class IdleDescriptors: @unchecked Sendable {
    /// Descriptors kept free for everything else the scenario opens.
    ///
    /// Thread-safety: a constant.
    public static let reserve = 256
    /// The descriptors.
    ///
    /// Thread-safety: immutable.
    public let descriptors: [Int32]
    /// How many were asked for.
    ///
    /// Thread-safety: immutable.
    public let requested: Int

    /// How many there are (``requested`` or fewer).
    ///
    /// Thread-safety: any thread.
    public var count: Int { descriptors.count }

    /// Makes up to `requested` eventfds; prints a line to standard error when the limit allows
    /// fewer.
    ///
    /// Thread-safety: any thread.
    public init(requested: Int) {
        self.requested = requested
        var made: [Int32] = []
        if requested > 0 {
            let limit = FileDescriptorLimit.raise()
            let room = max(0, limit - FileDescriptorLimit.openCount() - Self.reserve)
            let wanted = min(requested, room)
            made.reserveCapacity(wanted)
            while made.count < wanted {
                let fd = eventfd(0, CBENCH_EFD_CLOEXEC)
                if fd < 0 { break }
                made.append(fd)
            }
            if made.count < requested {
                var line = "IdleDescriptors: \(made.count) of \(requested) idle descriptors (RLIMIT_NOFILE \(limit))\n"
                line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
            }
        }
        descriptors = made
    }

    /// Closes the descriptors.
    ///
    /// Thread-safety: once, after every source watching them was cancelled.
    public func close() {
        for fd in descriptors { _ = Glibc.close(fd) }
    }
}
