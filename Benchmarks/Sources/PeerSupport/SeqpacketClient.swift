import CBenchNative
#if canImport(Glibc)
import Glibc
#endif

/// The raw floor's client: a blocking `SOCK_SEQPACKET` connection (`cbench_seqpacket.h`).
///
/// Thread-safety: one driving thread (see ``CrossProcessClient``).
public final class SeqpacketClient: CrossProcessClient, @unchecked Sendable {
    private let fd: Int32

    /// Connects to the raw server listening on `path`.
    ///
    /// Thread-safety: any thread.
    public init(path: String) throws {
        fd = cbench_seqpacket_connect(path)
        guard fd >= 0 else { throw CrossProcessFailure("seqpacket connect \(path): errno \(errno)") }
    }

    /// Thread-safety: the driving thread.
    public func roundTrips(_ count: Int, size: Int, latencies: UnsafeMutablePointer<Int64>?) throws {
        guard cbench_seqpacket_round_trips(fd, Int32(count), Int32(size), latencies) == 0 else {
            throw CrossProcessFailure("seqpacket round trips: errno \(errno)")
        }
    }

    /// Thread-safety: the driving thread.
    public func burst(_ count: Int, size: Int) throws {
        guard cbench_seqpacket_burst(fd, Int32(count), Int32(size)) == 0 else {
            throw CrossProcessFailure("seqpacket burst: errno \(errno)")
        }
    }

    /// Thread-safety: the driving thread, once.
    public func close() { _ = Glibc.close(fd) }
}
