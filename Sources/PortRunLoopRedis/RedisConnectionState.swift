/// Where a Redis transport's connection stands (``PortRunLoopBus/BusNotificationCenter/redisState``).
///
/// An endpoint with ``RedisEndpoint/sentinels`` passes through three more states on its way to
/// ``connected``: ``askingSentinel(_:)`` for each sentinel asked, then ``masterFound(_:)`` with
/// the answer, or ``masterChanged(_:)`` when a sentinel announced a new master (`+switch-master`).
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
    /// The sentinel at this address is being asked for the master's address (sentinel endpoints).
    case askingSentinel(RedisSentinels.Address)
    /// A sentinel named the master at this address: the center connects to it and checks its
    /// `ROLE` (sentinel endpoints).
    case masterFound(RedisSentinels.Address)
    /// A sentinel announced that the master moved to this address (`+switch-master`): the center
    /// left the old one and connects to it, checking its `ROLE` (sentinel endpoints).
    case masterChanged(RedisSentinels.Address)

    /// One line.
    ///
    /// Thread-safety: a value type.
    public var description: String {
        switch self {
        case .connecting: "connecting"
        case .connected: "connected"
        case .disconnected(let reason): "disconnected (\(reason))"
        case .closed: "closed"
        case .askingSentinel(let sentinel): "asking sentinel \(sentinel)"
        case .masterFound(let master): "master is \(master)"
        case .masterChanged(let master): "master changed to \(master) (switch-master)"
        }
    }
}
