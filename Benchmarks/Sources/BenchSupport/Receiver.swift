import CBenchSupport
import Foundation
import PeerSupport
import Synchronization

/// The consumer-side end of every scenario. Each peer calls ``receive()`` once per message on its
/// consumer thread; what it does depends on the role, and is the same code for every peer.
///
/// - ``Role/sink``: counts messages; signals ``done`` when the expected number arrived (throughput).
/// - ``Role/pinger``: counts pongs; sends the next ping on ``forward`` until the expected number of
///   round trips is done, then signals ``done``.
/// - ``Role/ponger``: answers every ping with a pong on ``forward``.
/// - ``Role/stamp``: records the arrival time and signals ``done`` (first send after idle).
/// - ``Role/placedSink``: a sink that also counts the messages handled on the CPU the producer
///   stamped in ``producerCPU`` before sending (sparse traffic).
///
/// Thread-safety: `Sendable` by construction of the scenarios: ``expect(_:)`` and ``forward`` are
/// set by the driver before it sends (the peer's own hand-off orders them before ``receive()``);
/// everything else is touched only on the consumer thread.
public final class Receiver: @unchecked Sendable {
    /// What ``receive()`` does.
    public enum Role: Sendable { case sink, pinger, ponger, stamp, placedSink }

    /// The role.
    public let role: Role
    /// Signalled at the end of a sample.
    public let done = Completion()
    /// Where pings (pinger) or pongs (ponger) go.
    public var forward: (any MessageChannel)?
    /// Arrival time of the last message, `CLOCK_MONOTONIC` ns (stamp role).
    public private(set) var lastArrival: UInt64 = 0
    /// The CPU the producer sent the latest message from (``Role/placedSink``); relaxed: the
    /// producer stores it before the peer's hand-off, which orders it before ``receive()``.
    public let producerCPU = Atomic<Int32>(-1)
    /// Messages of the sample handled on ``producerCPU`` (``Role/placedSink``).
    public private(set) var onProducerCPU = 0
    private var expected = 0
    private var count = 0

    /// Makes a receiver for `role`.
    public init(role: Role) { self.role = role }

    /// Arms the receiver for the next sample: `messages` (sink) or round trips (pinger).
    public func expect(_ messages: Int) {
        expected = messages
        count = 0
        onProducerCPU = 0
    }

    /// Handles one message that carries a notification (the redirected-notification scenario).
    @inline(never)
    public func receive(_ notification: Notification) {
        withExtendedLifetime(notification) { receive() }
    }

    /// Handles one message (consumer thread).
    @inline(never)
    public func receive() {
        switch role {
        case .placedSink:
            if sched_getcpu() == producerCPU.load(ordering: .relaxed) { onProducerCPU &+= 1 }
            fallthrough
        case .sink:
            count &+= 1
            if count == expected { count = 0; done.signal() }
        case .pinger:
            count &+= 1
            if count == expected { count = 0; done.signal() } else { forward!.send() }
        case .ponger:
            forward!.send()
        case .stamp:
            lastArrival = ProcessCounters.nanoseconds()
            done.signal()
        }
    }
}
