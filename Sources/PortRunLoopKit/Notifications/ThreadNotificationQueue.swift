import Foundation
import Logging
import Synchronization

/// One thread's notification queue: the counterpart of Foundation's `NotificationQueue` for a
/// ``PortRunLoop`` thread, and the queue a ``ThreadNotificationCenter`` delivers that thread's
/// cross-thread notifications through.
///
/// A center keeps one queue per target thread (``ThreadNotificationCenter/queue(for:)``; the default
/// center's queue for the calling thread is ``current``). It holds two kinds of entries:
///
/// - **Deliveries** from other threads: a notification for one observation whose loop is this
///   thread. They wait in first-in-first-out order per set of run-loop modes, are delivered by the
///   loop in those modes, and cost one loop wake per batch, never one per notification.
/// - **Pending posts**, queued on this thread with ``enqueue(_:postingStyle:coalesceMask:forModes:)``
///   (Foundation's `NotificationQueue` API, Foundation's types): `.now` posts at once, `.asap` on the
///   loop's next turn, `.whenIdle` when the loop is about to sleep with nothing else to do. Each style
///   posts in first-in-first-out order (swift-corelibs-foundation's `NotificationQueue` posts last in,
///   first out; this one does not). Coalescing follows Apple's rules, described at `enqueue`.
///
/// ``metrics`` are readable from any thread at any time.
///
/// Thread-safety: `Sendable`. ``metrics`` and ``loop`` may be read from any thread;
/// ``enqueue(_:postingStyle:coalesceMask:forModes:)`` and ``dequeueNotifications(matching:coalesceMask:)``
/// are owner-thread only (like Foundation's per-thread `NotificationQueue.default`), checked by a
/// precondition.
public final class ThreadNotificationQueue: @unchecked Sendable {
    /// The loop (thread) this queue belongs to.
    ///
    /// Thread-safety: immutable.
    public let loop: PortRunLoop
    private weak let center: ThreadNotificationCenter?
    let counters = QueueCounters()
    private let lanes = TracedMutex<[DeliveryLane]>([])

    // Owner-thread-only state.
    private struct PendingPost {
        let box: NotificationBox
        let sender: SenderKey
        let modes: ModeSet
    }
    private var asapPosts: [PendingPost] = []
    private var idlePosts: [PendingPost] = []
    private var asapFlushesPending: [ModeSet] = []
    private var beforeWaitingObserver: BeforeWaitingObserver?

    /// The center's ``ThreadNotificationCenter/logger``, for the lanes.
    private let logger: Logger
    /// The center's ``ThreadNotificationCenter/queuedDeliveryLimit``, for the lanes.
    private let deliveryLimit: Int?

    init(loop: PortRunLoop, center: ThreadNotificationCenter) {
        self.loop = loop
        self.center = center
        self.logger = center.logger
        self.deliveryLimit = center.queuedDeliveryLimit
    }

    /// The default center's queue for the calling thread (created, with the thread's loop, on first
    /// use): what `NotificationQueue.default` is to Foundation code.
    ///
    /// Thread-safety: any thread; each thread gets its own queue.
    public static var current: ThreadNotificationQueue {
        ThreadNotificationCenter.default.queue(for: PortRunLoop.current)
    }

    /// A snapshot of the queue's counts (see ``NotificationQueueMetrics`` for what each one means).
    ///
    /// Thread-safety: any thread; reading never blocks delivery.
    public var metrics: NotificationQueueMetrics { counters.snapshot }

    /// The lane for deliveries in `modes`, created on first use.
    func lane(for modes: ModeSet) -> DeliveryLane {
        lanes.withLock { lanes in
            if let lane = lanes.first(where: { $0.modes == modes }) { return lane }
            let lane = DeliveryLane(loop: loop, modes: modes, counters: counters, logger: logger,
                                    limit: deliveryLimit)
            lanes.append(lane)
            return lane
        }
    }

    // MARK: - NotificationQueue API

    /// Queues `notification` to be posted on this thread through the queue's center
    /// (`NotificationQueue.enqueue(_:postingStyle:coalesceMask:forModes:)`).
    ///
    /// - Parameters:
    ///   - notification: the notification to post.
    ///   - postingStyle: `.now` posts before returning; `.asap` posts on the loop's next turn in one
    ///     of `modes`; `.whenIdle` posts when the loop is about to sleep in one of `modes` with nothing
    ///     queued. Posts of one style happen in the order they were enqueued.
    ///   - coalesceMask: what makes a queued notification "the same" as this one: `.onName` (equal
    ///     names), `.onSender` (the same sender: objects by identity, `Hashable` values by equality,
    ///     nil with nil), both (the default, as in Foundation), or `[]` for no coalescing.
    ///     Apple's rules apply: `.now` removes every matching pending post and posts this one;
    ///     `.asap` removes matching `.whenIdle` posts, and is itself dropped if a matching `.asap` post
    ///     is already queued; `.whenIdle` is dropped if any matching post is queued. The queued one
    ///     keeps its place, so coalescing never reorders. Dropped and removed posts are counted in
    ///     ``NotificationQueueMetrics/coalesced``.
    ///   - modes: the run-loop modes `.asap` and `.whenIdle` posts wait for; nil means `[.default]`
    ///     (Foundation's default). Must not be empty.
    ///
    /// Thread-safety: this queue's own thread only (precondition), like Foundation's per-thread queue.
    public func enqueue(_ notification: Notification, postingStyle: NotificationQueue.PostingStyle,
                        coalesceMask: NotificationQueue.NotificationCoalescing = [.onName, .onSender],
                        forModes modes: [RunLoop.Mode]? = nil) {
        loop.preconditionOnLoopThread("ThreadNotificationQueue.enqueue(_:postingStyle:coalesceMask:forModes:)")
        Misuse.check(modes.map { !$0.isEmpty } ?? true,
                     "ThreadNotificationQueue.enqueue: the mode list is empty, so the notification could never be posted; pass nil for the default mode")
        installBeforeWaitingObserverIfNeeded()
        let post = PendingPost(box: NotificationBox(notification, context: CallerContext.capture()),
                               sender: SenderKey(notification.object),
                               modes: modes.map { ModeSet($0) } ?? .some([.default]))
        switch postingStyle {
        case .now:
            counters.didCoalesce(removeMatching(post, coalesceMask, from: &idlePosts)
                                 + removeMatching(post, coalesceMask, from: &asapPosts))
            guard let center else { // the center is gone: nothing to post through
                counters.didRejectAtOnce(1)
                return
            }
            counters.didSettleAtOnce(delivered: true)
            center.post(notification)
        case .asap:
            counters.didCoalesce(removeMatching(post, coalesceMask, from: &idlePosts))
            if containsMatching(post, coalesceMask, in: asapPosts) {
                counters.didSettleAtOnce(delivered: false)
                return
            }
            asapPosts.append(post)
            counters.didEnqueue(1)
            scheduleASAPFlush(post.modes)
        case .whenIdle:
            if containsMatching(post, coalesceMask, in: asapPosts) || containsMatching(post, coalesceMask, in: idlePosts) {
                counters.didSettleAtOnce(delivered: false)
                return
            }
            idlePosts.append(post)
            counters.didEnqueue(1)
        @unknown default:
            Misuse.fail("ThreadNotificationQueue.enqueue: unknown posting style \(postingStyle)")
        }
    }

    /// Removes pending posts that match `notification` under `coalesceMask` (`[]` matches nothing),
    /// without posting them; they are counted in ``NotificationQueueMetrics/discarded``.
    ///
    /// Thread-safety: this queue's own thread only (precondition).
    public func dequeueNotifications(matching notification: Notification,
                                     coalesceMask: NotificationQueue.NotificationCoalescing) {
        loop.preconditionOnLoopThread("ThreadNotificationQueue.dequeueNotifications(matching:coalesceMask:)")
        let probe = PendingPost(box: NotificationBox(notification), sender: SenderKey(notification.object), modes: .common)
        counters.didDiscard(removeMatching(probe, coalesceMask, from: &idlePosts)
                            + removeMatching(probe, coalesceMask, from: &asapPosts))
    }

    // MARK: - Owner side

    private func isMatch(_ a: PendingPost, _ b: PendingPost, _ mask: NotificationQueue.NotificationCoalescing) -> Bool {
        guard mask.contains(.onName) || mask.contains(.onSender) else { return false }
        if mask.contains(.onName), a.box.notification.name != b.box.notification.name { return false }
        if mask.contains(.onSender), !a.sender.isSameSender(as: b.sender) { return false }
        return true
    }

    private func containsMatching(_ post: PendingPost, _ mask: NotificationQueue.NotificationCoalescing,
                                  in list: [PendingPost]) -> Bool {
        list.contains { isMatch($0, post, mask) }
    }

    /// Removes matches from `list`; returns how many (they leave the queue's depth).
    private func removeMatching(_ post: PendingPost, _ mask: NotificationQueue.NotificationCoalescing,
                                from list: inout [PendingPost]) -> Int {
        let before = list.count
        list.removeAll { isMatch($0, post, mask) }
        let removed = before - list.count
        counters.didDequeue(removed)
        return removed
    }

    private func scheduleASAPFlush(_ modes: ModeSet) {
        guard !asapFlushesPending.contains(modes) else { return }
        asapFlushesPending.append(modes)
        loop.enqueue(QueuedWork(modes: modes, kind: .block { [self] in flushASAP(modes) }))
    }

    /// Loop thread: posts the `.asap` posts of `modes` that were queued when the flush started, oldest
    /// first, one at a time (a handler may enqueue or dequeue more meanwhile).
    private func flushASAP(_ modes: ModeSet) {
        asapFlushesPending.removeAll { $0 == modes }
        var budget = asapPosts.count
        while budget > 0, let index = asapPosts.firstIndex(where: { $0.modes == modes }) {
            budget -= 1
            let post = asapPosts.remove(at: index)
            counters.didDequeue()
            postInEnqueuersContext(post)
        }
        if asapPosts.contains(where: { $0.modes == modes }) { scheduleASAPFlush(modes) }
    }

    /// Loop thread, about to sleep in `mode`: posts the `.whenIdle` posts of that mode queued at this
    /// moment, oldest first. Returns true when it posted any (the loop then takes another turn).
    private func postWhenIdle(mode: RunLoop.Mode) -> Bool {
        let common = loop.ownerCommonModes
        var budget = idlePosts.count
        var posted = false
        while budget > 0, let index = idlePosts.firstIndex(where: { $0.modes.contains(mode, commonModes: common) }) {
            budget -= 1
            let post = idlePosts.remove(at: index)
            counters.didDequeue()
            posted = true
            postInEnqueuersContext(post)
        }
        return posted
    }

    /// Posts a queued notification in the `ServiceContext` it was enqueued in, so that its observers
    /// (on this thread and on others) see that context, not the flush's; counted as delivered, or
    /// as discarded when its center is gone.
    private func postInEnqueuersContext(_ post: PendingPost) {
        guard let center else {
            counters.didDiscard()
            return
        }
        counters.didDeliver()
        loop.withCallerContext(post.box.context, ambient: loop.innermostRunHasAmbientContext) {
            center.post(post.box.notification)
        }
    }

    /// Loop thread, the loop is shutting down: pending posts will never be posted.
    private func discardPendingPosts() {
        let count = asapPosts.count + idlePosts.count
        asapPosts.removeAll()
        idlePosts.removeAll()
        asapFlushesPending.removeAll()
        counters.didDequeue(count)
        counters.didDiscard(count)
        beforeWaitingObserver = nil
    }

    private func installBeforeWaitingObserverIfNeeded() {
        guard beforeWaitingObserver == nil, !loop.isShutDown else { return }
        let observer = BeforeWaitingObserver(
            callout: { [weak self] mode in self?.postWhenIdle(mode: mode) ?? false },
            shutDown: { [weak self] in self?.discardPendingPosts() })
        beforeWaitingObserver = observer
        loop.addBeforeWaitingObserver(observer)
    }
}
