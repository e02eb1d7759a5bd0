import Foundation
import PortRunLoopKit

/// Ours: `MessagePort.send` (no components) to a port scheduled on a ``RunLoopThread``.
///
/// The port's queue limit is raised to a million: the other peers' queues are unbounded, and the
/// throughput scenarios measure the hand-off, not back-pressure.
///
/// Thread-safety: `Sendable`; ``send()`` from any thread.
public final class MessagePortChannel: MessageChannel, @unchecked Sendable {
    /// The consumer thread.
    public let thread: RunLoopThread
    /// The port messages go to.
    public let port: MessagePort

    /// Starts a loop thread and schedules a port on it; returns once the port is scheduled.
    public init(receiver: Receiver) throws {
        self.thread = try RunLoopThread(name: "bench.port")
        self.port = MessagePort(queueLimit: 1 << 22)
        port.setHandler { [receiver] _ in receiver.receive() }
        thread.loop.add(port, forMode: .common)
        try thread.loop.performAndWait {}
    }

    public func send() {
        port.send(before: .distantFuture)
    }

    public var wakeSignals: Int? { thread.loop.metrics.wakeSignals }

    public func shutDown() {
        port.invalidate()
        thread.stop()
    }
}
