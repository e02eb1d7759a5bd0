import BenchSupport
import NIOCore
import NIOPosix

/// SwiftNIO: `EventLoop.execute` onto a one-thread `MultiThreadedEventLoopGroup` (epoll + eventfd
/// wake-ups, NIO's own task queue).
///
/// Thread-safety: `Sendable`; ``send()`` from any thread.
public final class NIOExecuteChannel: MessageChannel, @unchecked Sendable {
    /// The group (one thread).
    public let group: MultiThreadedEventLoopGroup
    /// The loop every message goes to.
    public let loop: any EventLoop
    private let receiver: Receiver

    /// Starts the event loop thread.
    public init(receiver: Receiver) {
        self.receiver = receiver
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.loop = group.next()
    }

    public func send() {
        loop.execute { [receiver] in receiver.receive() }
    }

    public var wakeSignals: Int? { nil }

    public func shutDown() {
        try? group.syncShutdownGracefully()
    }
}
