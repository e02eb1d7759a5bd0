/// What a Redis transport has done since it was made (counts only grow, except
/// ``bufferedWhileDisconnected``, which is the number kept right now).
///
/// Thread-safety: a value type; `Sendable`.
public struct RedisTransportMetrics: Sendable, Equatable, CustomStringConvertible {
    /// PUBLISH commands sent to the server.
    ///
    /// Thread-safety: a value type.
    public var published = 0
    /// PUBLISH commands the server answered, counted when the answer is read: the publishing
    /// connection reads answers in batches (with the subscribed connection's reads, at each tick
    /// of the command timeout's watchdog, and at once for `flushRedisPosts(timeout:)`),
    /// so a count may lag the server by up to a quarter of ``RedisEndpoint/commandTimeout``.
    ///
    /// Thread-safety: a value type.
    public var publishConfirmed = 0
    /// PUBLISH commands the server answered with an error (logged).
    ///
    /// Thread-safety: a value type.
    public var publishErrors = 0
    /// Posts sent but not answered when the connection was lost: the server may or may not have
    /// delivered them (they are not sent again).
    ///
    /// Thread-safety: a value type.
    public var unconfirmedAtDisconnect = 0
    /// Posts kept right now, waiting for the connection.
    ///
    /// Thread-safety: a value type.
    public var bufferedWhileDisconnected = 0
    /// Posts dropped unsent: ``RedisEndpoint/disconnectedPostLimit`` posts were already kept while
    /// disconnected, or the center was closed (or its loop shut down) with them still kept or queued.
    ///
    /// Thread-safety: a value type.
    public var droppedWhileDisconnected = 0
    /// Messages received on subscribed channels (notifications and malformed ones).
    ///
    /// Thread-safety: a value type.
    public var received = 0
    /// Messages that were not notification envelopes (dropped; the center counts and logs them too).
    ///
    /// Thread-safety: a value type.
    public var malformed = 0
    /// Times an established connection was lost.
    ///
    /// Thread-safety: a value type.
    public var connectionLosses = 0
    /// Connection attempts that failed (refused, timed out).
    ///
    /// Thread-safety: a value type.
    public var failedAttempts = 0
    /// Times the connection came back after a loss, subscriptions restored.
    ///
    /// Thread-safety: a value type.
    public var reconnections = 0
    /// SUBSCRIBE and PSUBSCRIBE commands confirmed by the server (restored ones included).
    ///
    /// Thread-safety: a value type.
    public var subscriptionsConfirmed = 0
    /// Health checks sent: a connection had heard nothing from the server for
    /// ``RedisEndpoint/healthCheckInterval`` (one answer that does not come within
    /// ``RedisEndpoint/commandTimeout`` is a loss, counted in ``connectionLosses``).
    ///
    /// Thread-safety: a value type.
    public var healthChecks = 0
    /// Durable entries acknowledged (`XACK`) after their delivery to the observations.
    ///
    /// Thread-safety: a value type.
    public var durableAcknowledged = 0
    /// Reads of new durable entries sent before the last read's entries were delivered, because
    /// it came back full (``RedisDurableNotifications/readCount`` entries of a stream): the
    /// observing center was behind its streams.
    ///
    /// Thread-safety: a value type.
    public var durableReadsAhead = 0
    /// Durable entries read again that this center had already delivered (their acknowledgement
    /// was lost with a connection): acknowledged, not delivered twice.
    ///
    /// Thread-safety: a value type.
    public var durableRedeliveriesSkipped = 0
    /// Times a reading connection found its consumer group had missed entries its stream trimmed
    /// (``RedisDurableNotifications/maximumLength`` exceeded while it was away; logged as an error).
    ///
    /// Thread-safety: a value type.
    public var durableRetentionGaps = 0
    /// Durable entries lost to retention: trimmed before the group read them (at least one per
    /// gap when the server cannot tell how many), or trimmed while handed out and not acknowledged.
    ///
    /// Thread-safety: a value type.
    public var durableLostToRetention = 0

    /// All zero.
    ///
    /// Thread-safety: a value type.
    public init() {}

    /// The counts on one line.
    ///
    /// Thread-safety: a value type.
    public var description: String {
        "published \(published), confirmed \(publishConfirmed), errors \(publishErrors), unconfirmed at disconnect \(unconfirmedAtDisconnect), "
            + "buffered \(bufferedWhileDisconnected), dropped while disconnected \(droppedWhileDisconnected), received \(received), "
            + "malformed \(malformed), losses \(connectionLosses), failed attempts \(failedAttempts), reconnections \(reconnections), "
            + "subscriptions confirmed \(subscriptionsConfirmed), health checks \(healthChecks), "
            + "durable acknowledged \(durableAcknowledged), durable reads ahead \(durableReadsAhead), durable redeliveries skipped \(durableRedeliveriesSkipped), "
            + "retention gaps \(durableRetentionGaps), lost to retention \(durableLostToRetention)"
    }
}
