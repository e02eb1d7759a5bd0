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
        // The hot path (Docs/Benchmarks.md): the cached plan for the name, one lock per lane the
        // notification goes to, no array built and nothing allocated per post.
        let plan = plan(for: notification.name)
        guard !plan.records.isEmpty else { return }
        let sender = plan.filtersSender ? SenderKey(notification.object) : .none
        let box = NotificationBox(notification, context: CallerContext.capture())
        var hasInline = false
        plan.lanes.withUnsafeBufferPointer { groups in
            for group in groups {
                // Asked per lane (usually one) rather than looking the thread's loop up: a
                // comparison with `pthread_self()` instead of a thread-specific read per post.
                if group.isOnCurrentThread { hasInline = true; continue }
                if !group.appendPost(box, sender: sender, checkSender: plan.filtersSender) {
                    // The thread's loop shut down: its observations are over.
                    for record in group.records { record.takeUnretainedValue().end() }
                }
            }
        }
        guard hasInline else { return }
        for record in plan.records where record.loop.isCurrentThread && record.isActive
            && record.accepts(sender, checkSender: plan.filtersSender) {
            _ = record.deliver(box)
        }
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
        return try dispatch(notification, synchronous: true, deadline: deadline)
    }

    /// ``postAndWait(_:timeout:)`` with a notification made from `name`, `sender` and `userInfo`.
    ///
    /// Thread-safety: any thread.
    @discardableResult
    public func postAndWait(name: Notification.Name, object sender: Any? = nil, userInfo: [AnyHashable: Any]? = nil,
                            timeout: Duration? = nil) throws(PortRunLoopError) -> Int {
        try postAndWait(Notification(name: name, object: sender, userInfo: userInfo), timeout: timeout)
    }

    // MARK: - Dispatch

    func dispatch(_ notification: Notification, synchronous: Bool, deadline: Double) throws(PortRunLoopError) -> Int {
        let records = matchingRecords(name: notification.name, sender: SenderKey(notification.object))
        guard !records.isEmpty else { return 0 }
        return try dispatch(notification, to: records, synchronous: synchronous, deadline: deadline)
    }

    /// Delivers to `records` (in registration order): queued per lane for other threads first, then
    /// inline for the calling thread's, then (synchronous) waits for the queued ones.
    func dispatch(_ notification: Notification, to records: [ObserverRecord], synchronous: Bool,
                  deadline: Double) throws(PortRunLoopError) -> Int {
        let current = PortRunLoop.existingForCurrentThread()
        var inline: [ObserverRecord] = []
        var groups: [(lane: DeliveryLane, records: [ObserverRecord])] = []
        for record in records {
            if record.loop === current {
                inline.append(record)
            } else if let index = groups.firstIndex(where: { $0.lane === record.lane }) {
                groups[index].records.append(record)
            } else {
                groups.append((record.lane, [record]))
            }
        }
        let box = NotificationBox(notification, context: CallerContext.capture())
        var waitFor: SynchronousPost?
        if !groups.isEmpty {
            let remote = groups.reduce(0) { $0 + $1.records.count }
            let post = synchronous ? SynchronousPost(deliveries: remote, waiter: current) : nil
            for group in groups {
                let ticket = post.map { SyncTicket(post: $0, entries: group.records.count) }
                let entries = group.records.map { LaneEntry(box: box, record: $0, ticket: ticket) }
                if !group.lane.append(entries, ticket: ticket) {
                    // The thread's loop shut down: its observations are over.
                    for record in group.records { record.end() }
                }
            }
            waitFor = post
        }
        var delivered = 0
        for record in inline where record.deliver(box) { delivered += 1 }
        if let waitFor {
            delivered += try waitFor.waitForCompletion(deadline: deadline, on: groups.map(\.lane.loop))
        }
        return delivered
    }
}
