/// The Redis channels notifications travel on (Docs/RedisNotifications.md, "Channels"): one per
/// notification name, `portrunloop.notification.<name>` (the name's bytes as they are, Redis
/// channels being binary-safe); observing every name is a pattern subscription to
/// `portrunloop.notification.*`.
///
/// Thread-safety: a stateless namespace.
enum RedisChannelNaming {
    static let prefix = "portrunloop.notification."
    static let anyNamePattern = prefix + "*"

    static func channel(for name: String) -> String { prefix + name }

    /// The notification name a channel carries, or nil for a channel outside the prefix.
    static func name(ofChannel channel: String) -> String? {
        guard channel.hasPrefix(prefix) else { return nil }
        return String(channel.dropFirst(prefix.count))
    }
}
