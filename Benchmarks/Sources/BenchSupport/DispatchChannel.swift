import Dispatch

/// `DispatchQueue.async` onto a serial queue: libdispatch picks the worker thread.
///
/// Thread-safety: `Sendable`; ``send()`` from any thread.
public final class DispatchChannel: MessageChannel, @unchecked Sendable {
    private let queue: DispatchQueue
    private let receiver: Receiver

    /// Makes a serial queue.
    public init(receiver: Receiver) {
        self.receiver = receiver
        self.queue = DispatchQueue(label: "bench.dispatch")
    }

    public func send() {
        queue.async { [receiver] in receiver.receive() }
    }

    public var wakeSignals: Int? { nil }

    public func shutDown() {
        queue.sync {}
    }
}
