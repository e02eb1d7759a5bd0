import Logging

extension Logger {
    /// What a loop, a ``RunLoopThread``, a ``ThreadNotificationCenter`` or a ``MessagePort`` logs
    /// to when given no logger: labelled "PortRunLoop", with a handler that drops everything, so
    /// the library logs nothing (and formats nothing) unless the application passes a logger.
    @usableFromInline
    static let portRunLoopDisabled = Logger(label: "PortRunLoop", factory: { _ in SwiftLogNoOpLogHandler() })
}

/// The metadata keys the library logs with (the ones the bus transports share are `package`).
///
/// Thread-safety: constants.
package enum LogKey {
    /// The ``PortRunLoop/name`` of the loop concerned.
    package static let loop = "portrunloop.loop"
    /// The ``MessagePort`` concerned (its description).
    static let port = "portrunloop.port"
    /// How many messages, blocks or notifications were discarded.
    package static let discarded = "portrunloop.discarded"
    /// Sends a full port has rejected since it was made.
    static let rejected = "portrunloop.rejected"
    /// Sends a full port rejected since the previous entry about it.
    static let rejectedSinceLastLog = "portrunloop.rejected_since_last_log"
    /// How many entries are waiting.
    static let queued = "portrunloop.queued"
    /// The port's queue limit.
    static let queueLimit = "portrunloop.queue_limit"
    /// A file descriptor.
    package static let fileDescriptor = "portrunloop.fd"
    /// The error an operation failed with.
    package static let error = "portrunloop.error"
}
