/// The metadata keys the Redis transport logs with besides the center's own (`BusLogKey`:
/// endpoint, reason, error, fd); <doc:RedisNotifications> lists them all.
///
/// Thread-safety: constants.
enum RedisLogKey {
    /// Which of the center's two connections: `publisher` or `subscriber`.
    static let connection = "portrunloop.redis.connection"
    /// Posts sent but not answered when the connection was lost (at most once: not sent again).
    static let unconfirmed = "portrunloop.redis.unconfirmed"
    /// Posts kept while disconnected and published after the reconnection.
    static let resent = "portrunloop.redis.resent"
    /// A sentinel's address (`ip:port`).
    static let sentinel = "portrunloop.redis.sentinel"
    /// The master's address (`ip:port`) a sentinel named.
    static let master = "portrunloop.redis.master"
    /// A durable name's stream key (`portrunloop.notification.<name>`).
    static let stream = "portrunloop.redis.stream"
    /// ``RedisDurableNotifications/group``.
    static let group = "portrunloop.redis.group"
    /// Stream entries a consumer group lost to retention.
    static let lost = "portrunloop.redis.lost"
    /// ``RedisEndpoint/disconnectedPostLimit``.
    static let postLimit = "portrunloop.redis.post_limit"
}
