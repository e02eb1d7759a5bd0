import PortRunLoopKit

/// The metadata keys ``BusNotificationCenter`` and its transports log with
/// (<doc:DistributedNotifications>; the Redis transport adds its own,
/// PortRunLoopRedis.docc/RedisNotifications.md).
///
/// Thread-safety: constants.
package enum BusLogKey {
    /// The unique bus name of the program that sent a dropped message.
    package static let sender = "portrunloop.bus.sender"
    /// Why a message was dropped.
    package static let reason = "portrunloop.bus.reason"
    /// The center's ``BusEndpoint``.
    package static let endpoint = "portrunloop.bus.endpoint"
    /// The observation concerned (its description).
    package static let observation = "portrunloop.bus.observation"
    /// ``BusNotificationCenter/heldNotificationLimit``.
    package static let holdLimit = "portrunloop.bus.hold_limit"
    /// How many were discarded (the core's key).
    package static let discarded = LogKey.discarded
    /// A loop's name (the core's key).
    package static let loop = LogKey.loop
    /// The error an operation failed with (the core's key).
    package static let error = LogKey.error
    /// A file descriptor (the core's key).
    package static let fileDescriptor = LogKey.fileDescriptor
}
