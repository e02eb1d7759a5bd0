import Foundation

/// The notifications a ``ThreadNotificationCenter`` posts, as an `AsyncSequence`: made by
/// ``ThreadNotificationCenter/notifications(named:object:bufferLimit:whenFull:on:)``.
///
/// ```swift
/// for await note in center.notifications(named: .configurationChanged) {
///     await reload(note.userInfo)
/// }
/// ```
///
/// **Buffer and overflow.** Notifications that arrive while nobody is waiting in `next()` are kept
/// in a buffer of at most ``bufferLimit`` notifications. When it is full, the ``overflowPolicy``
/// decides which one is dropped: ``OverflowPolicy/dropNewest`` (the default) drops the arriving
/// one and keeps the buffer as it is; ``OverflowPolicy/dropOldest`` drops the oldest buffered one
/// to make room. Every drop is counted in ``Statistics/dropped`` (``statistics``), so a consumer
/// can tell that it fell behind and by how much. Nothing is ever dropped silently.
///
/// **Ending.** The stream observes until ``finish()``, until a task waiting in `next()` is
/// cancelled (that `next()` returns nil at once, which ends a `for await` loop), or until the
/// stream and its iterators are released. Notifications buffered when it ends are still returned
/// by later `next()` calls; then `next()` returns nil.
///
/// One task iterates a stream at a time (two concurrent `next()` calls are a programmer error,
/// caught by a precondition). The `Notification`s are handed from the observing thread to the
/// consumer, so what they carry must be safe to read there — the rule of every notification
/// center.
///
/// Thread-safety: `Sendable`; ``statistics`` and ``finish()`` from any thread.
public struct NotificationStream: AsyncSequence, Sendable {
    /// The stream's elements.
    ///
    /// Thread-safety: see `Notification` and the rule above.
    public typealias Element = Notification
    /// The stream never throws.
    ///
    /// Thread-safety: not applicable.
    public typealias Failure = Never

    /// The default ``bufferLimit``.
    ///
    /// Thread-safety: a constant.
    public static let defaultBufferLimit = 256

    /// What a full buffer does with one more notification.
    ///
    /// Thread-safety: a value type; `Sendable`.
    public enum OverflowPolicy: Sendable, Equatable {
        /// Drop the arriving notification; the buffered ones stay (oldest first).
        ///
        /// Thread-safety: a constant.
        case dropNewest
        /// Drop the oldest buffered notification to make room for the arriving one.
        ///
        /// Thread-safety: a constant.
        case dropOldest
    }

    /// Counts since the stream was made. `received == delivered + dropped + buffered`.
    ///
    /// Thread-safety: a value type; `Sendable`.
    public struct Statistics: Sendable, Equatable {
        /// Matching notifications handed to the stream while it was observing.
        ///
        /// Thread-safety: a value type.
        public var received: Int
        /// Notifications returned by `next()`.
        ///
        /// Thread-safety: a value type.
        public var delivered: Int
        /// Notifications dropped because the buffer was full (see ``OverflowPolicy``).
        ///
        /// Thread-safety: a value type.
        public var dropped: Int
        /// Notifications waiting in the buffer right now.
        ///
        /// Thread-safety: a value type.
        public var buffered: Int
        /// True once the stream stopped observing.
        ///
        /// Thread-safety: a value type.
        public var isFinished: Bool
    }

    let buffer: NotificationStreamBuffer

    /// The most notifications the stream holds for a consumer that is not waiting.
    ///
    /// Thread-safety: immutable.
    public var bufferLimit: Int { buffer.limit }

    /// What happens when the buffer is full.
    ///
    /// Thread-safety: immutable.
    public var overflowPolicy: OverflowPolicy { buffer.overflow }

    /// A snapshot of the stream's counts, including how many notifications were dropped.
    ///
    /// Thread-safety: any thread.
    public var statistics: Statistics { buffer.statistics }

    /// Stops observing. Buffered notifications are still returned; then `next()` returns nil.
    /// Idempotent.
    ///
    /// Thread-safety: any thread.
    public func finish() { buffer.finish() }

    /// Thread-safety: any thread; iterate from one task at a time.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(buffer: buffer) }

    /// Iterates a ``NotificationStream``.
    ///
    /// Thread-safety: use from one task at a time (it is not `Sendable`).
    public struct AsyncIterator: AsyncIteratorProtocol {
        let buffer: NotificationStreamBuffer

        /// The next notification, waiting for one if none is buffered; nil once the stream ended
        /// and its buffer is empty. Cancelling a task that waits here ends the stream (nil).
        ///
        /// Thread-safety: one task at a time.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Notification? {
            await buffer.next(isolation: actor)?.notification
        }

        /// ``next(isolation:)`` without an isolation.
        ///
        /// Thread-safety: one task at a time.
        public mutating func next() async -> Notification? {
            await buffer.next(isolation: nil)?.notification
        }
    }
}
