/// The client half of one cross-process transport, in the benchmark process (or in a sender
/// process, see `CrossProcessBenchPeer`). Every transport carries the same exchange (see
/// `cbench_seqpacket.h`): echo ('E'), sink ('S') and flush ('F') messages.
///
/// Thread-safety: not `Sendable` in spirit; one thread drives a client (`@unchecked Sendable` only so
/// a fixture can hold it).
public protocol CrossProcessClient: AnyObject, Sendable {
    /// `count` echo round trips of `size`-byte messages, each waiting for its answer; each latency
    /// in ns goes to `latencies` when it is not nil (capacity ≥ `count`).
    ///
    /// Thread-safety: the driving thread.
    func roundTrips(_ count: Int, size: Int, latencies: UnsafeMutablePointer<Int64>?) throws
    /// `count` sink messages of `size` bytes, then a flush; returns once the server answered it.
    ///
    /// Thread-safety: the driving thread.
    func burst(_ count: Int, size: Int) throws
    /// Disconnects.
    ///
    /// Thread-safety: the driving thread, once.
    func close()
}

/// A transport call failed (the message names the transport and the call).
///
/// Thread-safety: `Sendable` value.
public struct CrossProcessFailure: Error, CustomStringConvertible, Sendable {
    /// What failed.
    ///
    /// Thread-safety: immutable.
    public let description: String

    /// Thread-safety: any thread.
    public init(_ description: String) { self.description = description }
}
