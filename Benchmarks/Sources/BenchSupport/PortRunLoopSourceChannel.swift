import PortRunLoopKit

/// Ours: a ``RunLoopSource`` on a ``RunLoopThread``, signalled and the loop woken from the
/// producer's thread (`CFRunLoopSourceSignal` + `CFRunLoopWakeUp`); its `perform` is the message.
/// Signals made before a pass are performed once, so this peer is for one message in flight at a
/// time (round trips), not bursts.
///
/// Thread-safety: `Sendable`; ``send()`` from any thread.
public final class PortRunLoopSourceChannel: MessageChannel, @unchecked Sendable {
    /// The consumer thread.
    public let thread: RunLoopThread
    private let source: RunLoopSource

    /// Starts a loop thread with the source in its common modes.
    public init(receiver: Receiver) throws {
        self.thread = try RunLoopThread(name: "bench.source")
        self.source = RunLoopSource { [receiver] _ in receiver.receive() }
        thread.loop.add(source, forMode: .common)
    }

    public func send() {
        source.signal()
        thread.loop.wakeUp()
    }

    public var wakeSignals: Int? { thread.loop.metrics.wakeSignals }

    public func shutDown() { thread.stop() }
}

/// Ours: ``PortRunLoopPerformChannel``'s `perform`, onto a loop with `observers` observers of every
/// activity in its common modes (each does nothing): what observers add to a turn.
///
/// Thread-safety: `Sendable`; ``send()`` from any thread.
public final class ObservedPerformChannel: MessageChannel, @unchecked Sendable {
    /// The consumer thread.
    public let thread: RunLoopThread
    private let receiver: Receiver

    /// Starts a loop thread with `observers` observers.
    public init(receiver: Receiver, observers: Int) throws {
        self.receiver = receiver
        self.thread = try RunLoopThread(name: "bench.observed")
        let all: RunLoopActivity = [.entry, .beforeTimers, .beforeSources, .beforeWaiting, .afterWaiting, .exit]
        for order in 0..<observers {
            thread.loop.add(RunLoopObserver(activities: all, order: order) { _, _ in }, forMode: .common)
        }
    }

    public func send() {
        thread.loop.perform { [receiver] in receiver.receive() }
    }

    public var wakeSignals: Int? { thread.loop.metrics.wakeSignals }

    public func shutDown() { thread.stop() }
}
