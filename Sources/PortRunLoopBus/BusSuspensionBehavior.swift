/// What an observation does with notifications that arrive while its ``BusNotificationCenter`` is
/// suspended (Apple's `DistributedNotificationCenter.SuspensionBehavior`).
///
/// A notification posted with `deliverImmediately: true` ignores suspension for every observation.
///
/// Thread-safety: a value type; `Sendable`.
public enum BusSuspensionBehavior: Sendable, Hashable {
    /// Discarded (counted in ``BusNotificationCenterMetrics/droppedWhileSuspended``).
    case drop
    /// Only the last notification with each name and object is kept; it is delivered on resume
    /// (earlier ones are counted in ``BusNotificationCenterMetrics/coalesced``). Apple's default.
    case coalesce
    /// Every notification is kept, up to ``BusNotificationCenter/heldNotificationLimit`` per
    /// observation, and delivered in arrival order on resume; arrivals beyond the limit are
    /// discarded and counted in ``BusNotificationCenterMetrics/heldOverflow``.
    case hold
    /// Delivered at once, as if the center were not suspended; it first delivers whatever the
    /// observation was holding, so its order is kept.
    case deliverImmediately
}
