#if canImport(Glibc)
import Glibc
#endif
import CBenchNative

/// A connected, non-blocking AF_UNIX stream socketpair: the two ends of an fd ping-pong.
///
/// Thread-safety: `Sendable`; immutable; ``close()`` once, after nothing watches the ends.
public final class SocketPair: @unchecked Sendable {
    /// One end.
    ///
    /// Thread-safety: immutable.
    public let first: Int32
    /// The other end.
    ///
    /// Thread-safety: immutable.
    public let second: Int32

    /// Makes the pair (traps when the process is out of descriptors).
    ///
    /// Thread-safety: any thread.
    public init() {
        var fds: [Int32] = [-1, -1]
        let rc = cbench_socketpair_nonblocking(&fds)
        precondition(rc == 0, "socketpair failed, errno \(errno)")
        first = fds[0]
        second = fds[1]
    }

    /// Closes both ends.
    ///
    /// Thread-safety: once.
    public func close() {
        _ = Glibc.close(first)
        _ = Glibc.close(second)
    }
}
