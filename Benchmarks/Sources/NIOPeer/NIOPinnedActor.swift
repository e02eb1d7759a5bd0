import Foundation
import BenchSupport
import NIOCore
import NIOPosix

/// An actor pinned to a SwiftNIO event loop through NIO's `SerialExecutor` conformance.
///
/// Thread-safety: an actor; runs on the event loop's thread.
public actor NIOPinnedActor: HopTarget {
    /// The group (one thread); shut it down when done.
    public nonisolated let group: MultiThreadedEventLoopGroup
    private let loop: any EventLoop
    private var count = 0

    /// Pins the actor to a new one-thread event loop group.
    public init() {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        loop = group.next()
    }

    public nonisolated var unownedExecutor: UnownedSerialExecutor { loop.executor.asUnownedSerialExecutor() }

    public func touch() -> Int { count &+= 1; return count }
}

/// NIO's blocking round trip: `submit(_:).wait()` from a plain thread.
public enum NIOSyncCall {
    /// A fixture making `calls` `submit {}.wait()` calls per sample.
    public static func fixture(calls: Int) -> SyncRoundTripFixture {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        return SyncRoundTripFixture(calls: calls, call: { _ = try? loop.submit {}.wait() },
                                    tearDown: { try? group.syncShutdownGracefully() })
    }
}

/// NIO `execute` carrying a notification (the peer of our redirected notification).
///
/// Thread-safety: `Sendable`; ``send()`` from any thread.
public final class NIOExecuteNotificationChannel: MessageChannel, @unchecked Sendable {
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let loop: any EventLoop
    private let receiver: Receiver
    private let notification = SendableNotification(Notification(name: .benchmarkRedirect))

    /// Starts the event loop thread.
    public init(receiver: Receiver) {
        self.receiver = receiver
        self.loop = group.next()
    }

    public func send() {
        loop.execute { [receiver, notification] in receiver.receive(notification.value) }
    }

    public var wakeSignals: Int? { nil }

    public func shutDown() { try? group.syncShutdownGracefully() }
}
