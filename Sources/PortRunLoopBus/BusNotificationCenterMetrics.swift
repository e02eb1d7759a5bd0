/// What a ``BusNotificationCenter`` has done since it was made (counts only grow).
///
/// Thread-safety: a value type; `Sendable`.
public struct BusNotificationCenterMetrics: Sendable, Equatable, CustomStringConvertible {
    /// Notifications this center posted (accepted by ``BusNotificationCenter/post(name:object:userInfo:deliverImmediately:)``).
    ///
    /// Thread-safety: a value type.
    public var posted = 0
    /// Notifications that arrived from the bus (each once, however many observations matched).
    ///
    /// Thread-safety: a value type.
    public var received = 0
    /// Deliveries handed to observations (one per matching observation).
    ///
    /// Thread-safety: a value type.
    public var delivered = 0
    /// Deliveries discarded by `.drop` observations while suspended.
    ///
    /// Thread-safety: a value type.
    public var droppedWhileSuspended = 0
    /// Deliveries replaced by a later one with the same name and object (`.coalesce`, suspended).
    ///
    /// Thread-safety: a value type.
    public var coalesced = 0
    /// Deliveries discarded because a `.hold` observation already held
    /// ``BusNotificationCenter/heldNotificationLimit`` notifications.
    ///
    /// Thread-safety: a value type.
    public var heldOverflow = 0
    /// `Posted` signals that were not readable notifications (another program's wrong signature,
    /// an empty name, a userInfo value with no property-list form): dropped and logged.
    ///
    /// Thread-safety: a value type.
    public var malformedDropped = 0
    /// Posts counted in ``posted`` that were released unsent: the connection was lost or closed,
    /// or the center's loop shut down, before they were written whole to the bus's socket (logged
    /// with the count). A post written before a loss may still have died with the daemon, unseen
    /// (PortRunLoopDBus.docc/DBusNotifications.md, "Failures"). A Redis center keeps
    /// posts through an outage instead, and counts what it drops in its transport's metrics.
    ///
    /// Thread-safety: a value type.
    public var postsDiscardedUnsent = 0
    /// Deliveries (counted in ``delivered`` too) and disconnection reports that an observation's
    /// loop refused because it had shut down. The observation ends with the first (logged).
    ///
    /// Thread-safety: a value type.
    public var refusedByShutDownLoops = 0

    /// All zero.
    ///
    /// Thread-safety: a value type.
    public init() {}

    /// The counts on one line.
    ///
    /// Thread-safety: a value type.
    public var description: String {
        "posted \(posted), received \(received), delivered \(delivered), dropped while suspended \(droppedWhileSuspended), coalesced \(coalesced), held overflow \(heldOverflow), malformed \(malformedDropped), discarded unsent \(postsDiscardedUnsent), refused by shut-down loops \(refusedByShutDownLoops)"
    }
}
