import Foundation
import PortRunLoopKit

extension Notification.Name {
    /// The notification every redirect scenario carries.
    public static let benchmarkRedirect = Notification.Name("PortRunLoopBenchmarks.redirect")
}

/// A notification that may cross threads (its object and userInfo are nil here, so it is safe).
///
/// Thread-safety: `Sendable` by that construction.
public struct SendableNotification: @unchecked Sendable {
    /// The notification.
    public let value: Notification
    /// Wraps `value`.
    public init(_ value: Notification) { self.value = value }
}

/// Ours: a notification posted on the producer's thread and redirected to an observer on another
/// thread by ``ThreadNotificationCenter``, one post per message.
///
/// Thread-safety: `Sendable`; ``send()`` from any thread.
public final class RedirectedNotificationChannel: MessageChannel, @unchecked Sendable {
    /// The observer's thread.
    public let thread: RunLoopThread
    private let center = ThreadNotificationCenter()
    private let notification = Notification(name: .benchmarkRedirect)
    private var observation: NotificationObservation!

    /// Starts a loop thread and observes ``Notification/Name/benchmarkRedirect`` on it.
    public init(receiver: Receiver) throws {
        self.thread = try RunLoopThread(name: "bench.notify")
        observation = center.addObserver(forName: .benchmarkRedirect, object: nil, on: thread.loop) { [receiver] note in
            receiver.receive(note)
        }
        try thread.loop.performAndWait {}
    }

    public func send() {
        center.post(notification)
    }

    public var wakeSignals: Int? { thread.loop.metrics.wakeSignals }

    public func shutDown() {
        observation.remove()
        thread.stop()
    }
}
