/// Where a Redis transport's connection stands (``PortRunLoopBus/BusNotificationCenter/redisState``).
///
/// Thread-safety: a value type; `Sendable`.
public enum RedisConnectionState: Sendable, Hashable, CustomStringConvertible {
    /// The first connection is being made.
    case connecting
    /// Both connections (publishing and subscribed) are up and every subscription is in effect.
    case connected
    /// The connection was lost or could not be made (the reason); attempts go on with back-off,
    /// posts are kept up to ``RedisEndpoint/disconnectedPostLimit``.
    case disconnected(String)
    /// The center was closed: nothing more is sent or received.
    case closed

    /// One line.
    ///
    /// Thread-safety: a value type.
    public var description: String {
        switch self {
        case .connecting: "connecting"
        case .connected: "connected"
        case .disconnected(let reason): "disconnected (\(reason))"
        case .closed: "closed"
        }
    }
}
