/// The metadata keys ``BusNotificationCenter`` logs with (Docs/DistributedNotifications.md).
///
/// Thread-safety: constants.
enum BusLogKey {
    /// The unique bus name of the program that sent a dropped message.
    static let sender = "portrunloop.bus.sender"
    /// Why a message was dropped.
    static let reason = "portrunloop.bus.reason"
    /// The center's ``BusEndpoint``.
    static let endpoint = "portrunloop.bus.endpoint"
    /// The observation concerned (its description).
    static let observation = "portrunloop.bus.observation"
    /// ``BusNotificationCenter/heldNotificationLimit``.
    static let holdLimit = "portrunloop.bus.hold_limit"
    /// How many were discarded (the core's key).
    static let discarded = "portrunloop.discarded"
    /// A loop's name (the core's key).
    static let loop = "portrunloop.loop"
    /// The error an operation failed with (the core's key).
    static let error = "portrunloop.error"
    /// A file descriptor (the core's key).
    static let fileDescriptor = "portrunloop.fd"
}
