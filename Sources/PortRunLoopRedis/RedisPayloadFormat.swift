/// The form of the payload a Redis center posts (<doc:RedisNotifications>, "Payload"). A center
/// reads both forms whatever it posts, telling them apart by the first byte.
///
/// Thread-safety: `Sendable` value.
public enum RedisPayloadFormat: Sendable, Hashable {
    /// The compact binary form (the default): the cheapest to write and read; centers of this
    /// version and later read it.
    case binary
    /// The JSON envelope `redis-cli` users and scripts read and write; larger and slower to code.
    case json
}
