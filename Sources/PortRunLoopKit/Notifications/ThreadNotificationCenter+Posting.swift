import Foundation

extension ThreadNotificationCenter {
    /// Posts `notification` from the calling thread.
    ///
    /// Observers whose loop is the calling thread's are called before this returns, synchronously,
    /// in registration order (modes are not consulted: as in Foundation). Every other matching
    /// observer gets it through its thread's queue: delivered in the observation's modes, after every
    /// notification this thread posted to it earlier (first in, first out per posting thread). The
    /// cross-thread deliveries are queued *before* the inline observers run, so a notification an
    /// inline handler posts in turn reaches other threads after this one.
    ///
    /// There is no order between notifications posted on *different* threads, nor between a
    /// notification delivered inline and one queued earlier on the same observer thread by another
    /// poster (the inline one runs at once).
    ///
    /// Thread-safety: any thread. `notification`'s object and userInfo are read on the observers'
    /// threads, so they must be safe to read there (as with Foundation's center).
    public func post(_ notification: Notification) {
        // The hot path (Docs/Benchmarks.md, `Throughput1P.Redirect.Ours.*` and `SameThreadPost.*`):
        // the cached plan for the name, one lock per lane the notification goes to, no array built
        // and nothing allocated per post.
        _ = try? deliver(notification, by: plan(for: notification.name), synchronous: false, deadline: .infinity)
    }

    /// Posts a notification made from `name`, `sender` and `userInfo`; see ``post(_:)``.
    ///
    /// Thread-safety: any thread.
    public func post(name: Notification.Name, object sender: Any? = nil, userInfo: [AnyHashable: Any]? = nil) {
        post(Notification(name: name, object: sender, userInfo: userInfo))
    }

    /// Posts `notification` like ``post(_:)`` and returns once every matching observer, on every
    /// thread, has handled it.
    ///
    /// **It never deadlocks.** Observers on the posting thread are called inline. While waiting for
    /// the others, a posting thread that has a loop runs it in a private mode in which only
    /// synchronous work addressed to it runs: other threads' `performAndWait` calls and the
    /// deliveries of their `postAndWait`s. So when two threads post-and-wait to each other at the same
    /// time, each delivers the other's notification while it waits, and both return. The rule, in
    /// short: *a thread waiting in `postAndWait` (or `performAndWait`) keeps delivering synchronous
    /// notifications addressed to it; asynchronously posted ones wait until it returns, except those
    /// queued for the same observer modes ahead of a synchronous one, which are delivered first so
    /// that order is kept.*
    ///
    /// A delivery still waits for its thread to run in the observation's modes or to wait itself;
    /// a thread that is blocked elsewhere (not in a run loop) holds the post up until `timeout`.
    ///
    /// - Parameter notification: the notification to post.
    /// - Parameter timeout: how long to wait (nil: no limit). When it passes, deliveries that have
    ///   not started are withdrawn — they will never start, and are counted as discarded — the call
    ///   waits for deliveries already running to finish, and throws ``PortRunLoopError/timedOut``.
    ///   Either way, when the call returns or throws, no handler for this notification is running or
    ///   will start.
    /// - Returns: how many handler calls were made.
    ///
    /// Thread-safety: any thread.
    @discardableResult
    public func postAndWait(_ notification: Notification, timeout: Duration? = nil) throws(PortRunLoopError) -> Int {
        let deadline = timeout.map { System.monotonicSeconds() + $0.seconds } ?? .infinity
        return try deliver(notification, by: plan(for: notification.name), synchronous: true, deadline: deadline)
    }

    /// ``postAndWait(_:timeout:)`` with a notification made from `name`, `sender` and `userInfo`.
    ///
    /// Thread-safety: any thread.
    @discardableResult
    public func postAndWait(name: Notification.Name, object sender: Any? = nil, userInfo: [AnyHashable: Any]? = nil,
                            timeout: Duration? = nil) throws(PortRunLoopError) -> Int {
        try postAndWait(Notification(name: name, object: sender, userInfo: userInfo), timeout: timeout)
    }

    // MARK: - The posting path

    /// The one posting path (`post`, `postAndWait`, and Foundation observers with a plan of their
    /// own): queues the notification on the lane of every other thread `plan` sends it to (one lock
    /// per lane), then calls the calling thread's observers inline, in registration order; a
    /// synchronous post then waits (``SynchronousPost``) for the queued deliveries. Returns the
    /// number of handler calls made (counted only when `synchronous`; a synchronous post throws
    /// ``PortRunLoopError/timedOut`` at its deadline, an asynchronous one never throws).
    ///
    /// Allocation-free when asynchronous: the notification's box is the only object made.
    func deliver(_ notification: Notification, by plan: DispatchPlan, synchronous: Bool,
                 deadline: Double) throws(PortRunLoopError) -> Int {
        guard !plan.records.isEmpty else { return 0 }
        let checkSender = plan.filtersSender
        let sender = checkSender ? SenderKey(notification.object) : .none
        let box = NotificationBox(notification, context: CallerContext.capture())
        var hasInline = false
        let post = synchronous ? Self.synchronousPost(for: plan, sender: sender) : nil
        var targets: [PortRunLoop] = [] // the loops a synchronous post waits on
        plan.lanes.withUnsafeBufferPointer { groups in
            for group in groups {
                // Asked per lane (usually one) rather than looking the thread's loop up: a
                // comparison with `pthread_self()` instead of a thread-specific read per post.
                if group.isOnCurrentThread { hasInline = true; continue }
                var ticket: SyncTicket?
                if let post {
                    let expected = group.count(accepting: sender, checkSender: checkSender)
                    guard expected > 0 else { continue }
                    ticket = SyncTicket(post: post, entries: expected)
                    targets.append(group.loop)
                }
                // False: the thread's loop shut down, and its observations are over.
                if !group.append(box, sender: sender, checkSender: checkSender, ticket: ticket) { group.endRecords() }
            }
        }
        var delivered = 0
        if hasInline {
            for record in plan.records where record.loop.isCurrentThread && record.isActive
                && record.accepts(sender, checkSender: checkSender) {
                if record.deliver(box) { delivered += 1 }
            }
        }
        if let post { delivered += try post.waitForCompletion(deadline: deadline, on: targets) }
        return delivered
    }

    /// A synchronous post of a notification from `sender` along `plan`, counting the deliveries
    /// queued for other threads; nil when there are none.
    private static func synchronousPost(for plan: DispatchPlan, sender: SenderKey) -> SynchronousPost? {
        var remote = 0
        for group in plan.lanes where !group.isOnCurrentThread {
            remote += group.count(accepting: sender, checkSender: plan.filtersSender)
        }
        return remote > 0 ? SynchronousPost(deliveries: remote, waiter: PortRunLoop.existingForCurrentThread()) : nil
    }
}
