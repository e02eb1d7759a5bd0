import Foundation
import PortRunLoopKit

/// Notification names whose posts survive a reconnection, a restart and a Sentinel failover:
/// they travel on Redis Streams, read through a consumer group, instead of pub/sub
/// (<doc:RedisNotifications>, "Durable notifications"). Set on ``RedisEndpoint/durable``.
///
/// - A post of one of ``names`` is appended to the name's stream
///   (`XADD portrunloop.notification.<name> MAXLEN ~ <maximumLength> * payload <payload>`), not
///   published: every center that posts or observes a durable name declares it durable.
/// - An observation of a durable name reads the stream as the consumer ``consumer`` of the group
///   ``group`` (`XREADGROUP`, on a connection of its own), delivers each entry to the center's
///   observations, then acknowledges it (`XACK`). A center that comes back with the same group and
///   consumer, after a loss or a restart, first reads what it was handed and did not acknowledge,
///   then what was posted while it was away (within ``maximumLength``).
///
/// Delivery is at least once (an entry handed to the observations and not yet acknowledged when
/// the process ends is delivered again by the next center of that consumer), exactly once per
/// consumer for acknowledged entries, and in posting order per posting center.
///
/// A value out of range, given to the initialiser or set later, is a precondition failure naming
/// the field.
///
/// Thread-safety: a value type; `Sendable`.
public struct RedisDurableNotifications: Sendable, Hashable {
    /// Where a group that does not exist yet starts reading its stream.
    ///
    /// Thread-safety: a value type; `Sendable`.
    public enum GroupStart: Sendable, Hashable {
        /// At the stream's end (`XGROUP CREATE … $`): a new group sees what is posted after its
        /// first observation was added (the default).
        ///
        /// Thread-safety: a value type.
        case newEntries
        /// At the stream's beginning (`XGROUP CREATE … 0`): a new group also sees every entry the
        /// stream still retains.
        ///
        /// Thread-safety: a value type.
        case retainedEntries
    }

    /// The durable notification names.
    ///
    /// Thread-safety: a value type.
    public var names: Set<String>
    /// The consumer group: the durable name of the service whose centers observe (each group gets
    /// every entry once). Not empty.
    ///
    /// Thread-safety: a value type.
    public var group: String { didSet { Self.check(identifier: group, "group") } }
    /// The consumer within ``group``: the durable name of this center (a center that comes back
    /// with it gets what this consumer was handed and did not acknowledge). Two running centers
    /// with the same group and consumer share its entries between them. Not empty.
    ///
    /// Thread-safety: a value type.
    public var consumer: String { didSet { Self.check(identifier: consumer, "consumer") } }
    /// About how many entries each stream retains (`MAXLEN ~`, trimmed by whole nodes, so a few
    /// more may remain); a consumer away longer than that loses the oldest, which is counted
    /// (``RedisTransportMetrics/durableLostToRetention``). At least 1; default 100 000.
    ///
    /// Thread-safety: a value type.
    public var maximumLength: Int { didSet { Self.check(maximumLength: maximumLength) } }
    /// How many entries one read takes (`COUNT`). At least 1; default 100.
    ///
    /// Thread-safety: a value type.
    public var readCount: Int { didSet { Self.check(readCount: readCount) } }
    /// How long one read waits for entries at the server (`BLOCK`); the reading connection is
    /// busy meanwhile, so adding an observation of another durable name may wait that long. Kept
    /// under half of ``RedisEndpoint/commandTimeout`` (longer values are cut to it). Positive;
    /// default 1 s.
    ///
    /// Thread-safety: a value type.
    public var blockTimeout: Duration { didSet { Self.check(blockTimeout: blockTimeout) } }
    /// Where a new group starts (``GroupStart/newEntries`` unless set).
    ///
    /// Thread-safety: a value type.
    public var groupStart: GroupStart = .newEntries

    /// The default ``maximumLength``.
    ///
    /// Thread-safety: a constant.
    public static let defaultMaximumLength = 100_000

    /// Durable `names`, observed as `consumer` of `group`.
    ///
    /// - Parameters:
    ///   - names: the durable notification names.
    ///   - group: ``group``; not empty.
    ///   - consumer: ``consumer``; not empty.
    ///   - maximumLength: ``maximumLength``; at least 1.
    ///   - readCount: ``readCount``; at least 1.
    ///   - blockTimeout: ``blockTimeout``; positive.
    ///   - groupStart: ``groupStart``.
    ///
    /// Thread-safety: a value type.
    public init(names: Set<Notification.Name>, group: String, consumer: String,
                maximumLength: Int = RedisDurableNotifications.defaultMaximumLength, readCount: Int = 100,
                blockTimeout: Duration = .seconds(1), groupStart: GroupStart = .newEntries) {
        Self.check(identifier: group, "group")
        Self.check(identifier: consumer, "consumer")
        Self.check(maximumLength: maximumLength)
        Self.check(readCount: readCount)
        Self.check(blockTimeout: blockTimeout)
        self.names = Set(names.map(\.rawValue))
        self.group = group
        self.consumer = consumer
        self.maximumLength = maximumLength
        self.readCount = readCount
        self.blockTimeout = blockTimeout
        self.groupStart = groupStart
    }

    /// Whether `name` is durable.
    ///
    /// Thread-safety: a value type.
    public func contains(_ name: Notification.Name) -> Bool { names.contains(name.rawValue) }

    /// The read's `BLOCK`, in milliseconds: ``blockTimeout``, at most half of `commandTimeout`.
    func blockMilliseconds(commandTimeout: Duration) -> Int {
        let block = min(blockTimeout, commandTimeout / 2)
        return max(1, Int(block.components.seconds * 1000 + block.components.attoseconds / 1_000_000_000_000_000))
    }

    private static func check(identifier: String, _ field: String) {
        Misuse.check(!identifier.isEmpty, "RedisDurableNotifications: \(field) is empty")
    }

    private static func check(maximumLength: Int) {
        Misuse.check(maximumLength >= 1, "RedisDurableNotifications: maximumLength must be at least 1")
    }

    private static func check(readCount: Int) {
        Misuse.check(readCount >= 1, "RedisDurableNotifications: readCount must be at least 1")
    }

    private static func check(blockTimeout: Duration) {
        Misuse.check(blockTimeout > .zero, "RedisDurableNotifications: blockTimeout must be positive")
    }
}
