import PortRunLoopKit

/// Ours: `PortRunLoop.perform` onto a ``RunLoopThread``.
///
/// Thread-safety: `Sendable`; ``send()`` from any thread.
public final class PortRunLoopPerformChannel: MessageChannel, @unchecked Sendable {
    /// The consumer thread.
    public let thread: RunLoopThread
    private let receiver: Receiver

    /// Starts a loop thread.
    public init(receiver: Receiver) throws {
        self.receiver = receiver
        self.thread = try RunLoopThread(name: "bench.perform")
    }

    public func send() {
        thread.loop.perform { [receiver] in receiver.receive() }
    }

    public var wakeSignals: Int? { thread.loop.metrics.wakeSignals }

    public func shutDown() { thread.stop() }
}
