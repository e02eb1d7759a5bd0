import Synchronization

/// Counts of one thread's ``ThreadNotificationQueue``, for operators: how deep the queue is, how
/// deep it got, and what became of every entry.
///
/// An *entry* is one unit of queued work on that thread: either one delivery (one notification
/// for one observer whose loop is this thread, posted from another thread) or one pending post
/// (a notification given to ``ThreadNotificationQueue/enqueue(_:postingStyle:coalesceMask:forModes:)``
/// with `.asap` or `.whenIdle`). When the queue is quiet,
/// `enqueued == depth + delivered + coalesced + discarded`.
///
/// Thread-safety: a value type; `Sendable`. Snapshots are taken from any thread without stopping
/// delivery; the fields are read one by one, so a snapshot taken while posts are in flight may be
/// off by the entries in flight at that instant.
public struct NotificationQueueMetrics: Sendable, Equatable, CustomStringConvertible {
    /// Entries waiting right now.
    ///
    /// Thread-safety: a value.
    public var depth: Int
    /// The largest ``depth`` seen since the queue was made.
    ///
    /// Thread-safety: a value.
    public var highWaterMark: Int
    /// Entries accepted since the queue was made (including those later coalesced or discarded).
    ///
    /// Thread-safety: a value.
    public var enqueued: Int
    /// Deliveries handed to their handler, plus pending posts that were posted.
    ///
    /// Thread-safety: a value.
    public var delivered: Int
    /// Pending posts dropped because a matching one was already queued, or removed because a
    /// matching one was posted with a more urgent style (Apple's coalescing rules).
    ///
    /// Thread-safety: a value.
    public var coalesced: Int
    /// Entries dropped for any other reason: the observation ended before its turn (removed, token
    /// released, observer gone), a ``ThreadNotificationCenter/postAndWait(_:timeout:)`` timed out
    /// before this delivery started, ``ThreadNotificationQueue/dequeueNotifications(matching:coalesceMask:)``,
    /// or the thread's loop shut down.
    ///
    /// Thread-safety: a value.
    public var discarded: Int
    /// Times a drain of cross-thread deliveries was scheduled on the loop: at most one per batch of
    /// posts that found the queue idle (never one per notification), plus at most one continuation
    /// per drain that left entries behind (so nested runs keep delivering).
    ///
    /// Thread-safety: a value.
    public var drainsScheduled: Int

    /// Makes a metrics value (for comparisons and tests; live values come from
    /// ``ThreadNotificationQueue/metrics``).
    ///
    /// Thread-safety: a value.
    public init(depth: Int = 0, highWaterMark: Int = 0, enqueued: Int = 0, delivered: Int = 0, coalesced: Int = 0,
                discarded: Int = 0, drainsScheduled: Int = 0) {
        self.depth = depth
        self.highWaterMark = highWaterMark
        self.enqueued = enqueued
        self.delivered = delivered
        self.coalesced = coalesced
        self.discarded = discarded
        self.drainsScheduled = drainsScheduled
    }

    /// Thread-safety: a value.
    public var description: String {
        "depth \(depth) (high-water \(highWaterMark)), enqueued \(enqueued), delivered \(delivered), coalesced \(coalesced), discarded \(discarded), drains \(drainsScheduled)"
    }
}

/// The live counters behind ``NotificationQueueMetrics``: relaxed atomics, so any thread reads
/// them without taking a lock the delivery path uses.
///
/// Thread-safety: fully thread-safe.
final class QueueCounters: Sendable {
    // Written per post, by the posting threads. The depth is not kept: it is `enqueued - dequeued`,
    // so a post does one read-modify-write here instead of two, and never writes the line the loop
    // writes when it takes a batch.
    private let enqueued = Atomic<Int>(0)
    private let highWater = Atomic<Int>(0)
    // Keeps the loop's per-delivery counters below off the posters' cache line (stored properties
    // are laid out in declaration order), so a burst does not bounce one line between the CPUs.
    private let cacheLinePadding: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
    // Written per delivery (or per batch), by the loop's thread.
    private let dequeued = Atomic<Int>(0)
    private let delivered = Atomic<Int>(0)
    private let coalesced = Atomic<Int>(0)
    private let discarded = Atomic<Int>(0)
    private let drains = Atomic<Int>(0)

    /// `count` entries joined the queue.
    func didEnqueue(_ count: Int) {
        guard count > 0 else { return }
        let now = enqueued.add(count, ordering: .relaxed).newValue - dequeued.load(ordering: .relaxed)
        var seen = highWater.load(ordering: .relaxed)
        while now > seen {
            let (exchanged, original) = highWater.weakCompareExchange(
                expected: seen, desired: now, successOrdering: .relaxed, failureOrdering: .relaxed)
            if exchanged { break }
            seen = original
        }
    }

    /// `count` entries were accepted and dropped at once (their queue is dead).
    func didRejectAtOnce(_ count: Int) {
        enqueued.add(count, ordering: .relaxed)
        dequeued.add(count, ordering: .relaxed)
        discarded.add(count, ordering: .relaxed)
    }

    /// `count` entries left the queue (they are then delivered, coalesced or discarded).
    func didDequeue(_ count: Int = 1) { dequeued.add(count, ordering: .relaxed) }

    func didDeliver(_ count: Int = 1) { delivered.add(count, ordering: .relaxed) }
    func didCoalesce(_ count: Int = 1) { coalesced.add(count, ordering: .relaxed) }
    func didDiscard(_ count: Int = 1) { discarded.add(count, ordering: .relaxed) }
    func didScheduleDrain() { drains.add(1, ordering: .relaxed) }

    /// `.now` posts and coalesced-on-arrival posts: counted as enqueued and settled at once.
    func didSettleAtOnce(delivered wasDelivered: Bool) {
        enqueued.add(1, ordering: .relaxed)
        dequeued.add(1, ordering: .relaxed)
        if wasDelivered { delivered.add(1, ordering: .relaxed) } else { coalesced.add(1, ordering: .relaxed) }
    }

    var snapshot: NotificationQueueMetrics {
        // `dequeued` first: every entry counted there was counted in `enqueued` before, so reading
        // `enqueued` second cannot give a smaller number (the `max` is belt and braces).
        let left = dequeued.load(ordering: .acquiring)
        let entered = enqueued.load(ordering: .acquiring)
        return NotificationQueueMetrics(
            depth: max(0, entered - left), highWaterMark: highWater.load(ordering: .relaxed),
            enqueued: entered, delivered: delivered.load(ordering: .relaxed),
            coalesced: coalesced.load(ordering: .relaxed), discarded: discarded.load(ordering: .relaxed),
            drainsScheduled: drains.load(ordering: .relaxed))
    }
}
