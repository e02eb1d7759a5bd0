import Foundation
import Logging
import Synchronization

/// A notification center that delivers each observer's notifications on the thread the observer
/// chose — "a separate class that would have one notification queue for each thread and be able to
/// deliver notifications to multiple observer objects and methods", as Apple's *Delivering
/// Notifications To Particular Threads* puts it. Payloads are Foundation's `Notification` and
/// `Notification.Name`, so existing code ports as is.
///
/// - **Observing.** ``addObserver(forName:object:on:inModes:using:)`` takes a closure;
///   ``addObserver(_:name:object:on:inModes:_:)`` takes an observer object, held weakly, and a method
///   to call on it. Both filter by name (nil: every name) and sender (nil: any; objects match by
///   identity, `Hashable` values by equality — swift-corelibs-foundation never matches a value-type
///   sender), and deliver on a ``PortRunLoop`` (default: the calling thread's) in run-loop modes
///   (default: the common modes). Both return a ``NotificationObservation`` token.
/// - **Posting** from any thread (``post(_:)``): observers whose loop is the posting thread are called
///   inline, synchronously, in registration order (Foundation's semantics, modes not consulted);
///   every other observer gets the notification through its thread's ``ThreadNotificationQueue``,
///   delivered in post order (first in, first out per posting thread), in the observation's modes,
///   with one loop wake per batch of posts, never one per notification.
/// - **Waiting** (``postAndWait(_:timeout:)``): returns once every observer, on every thread, has
///   handled the notification. It never deadlocks: see the method for the rule.
/// - **Removal** is exact: see ``NotificationObservation``.
/// - **Bridging** from Foundation's centers: ``bridge(from:name:object:)`` and
///   ``addObserver(forName:object:postedOn:on:inModes:using:)``.
///
/// Thread-safety: `Sendable`; every member is safe from any thread. Handlers run on their
/// observation's loop thread only.
public final class ThreadNotificationCenter: @unchecked Sendable {
    /// The process-wide center (what `NotificationCenter.default` is to Foundation code).
    ///
    /// Thread-safety: immutable; the center is `Sendable`.
    public static let `default` = ThreadNotificationCenter()

    struct Registry {
        var byName: [Notification.Name: [ObserverRecord]] = [:]
        var anyName: [ObserverRecord] = []
        var nextSequence: UInt64 = 0
        var queues: [ObjectIdentifier: ThreadNotificationQueue] = [:]
        /// Plans made since the observations last changed, by name (``DispatchPlan``).
        var plans: [Notification.Name: DispatchPlan] = [:]
        /// The plan of the last name posted, compared before `plans` is hashed.
        var lastPlan: DispatchPlan?

        /// Observations changed: every plan is out of date.
        mutating func dropPlans() {
            plans.removeAll(keepingCapacity: true)
            lastPlan = nil
        }

        /// The plan for posts of `name`, made on first use.
        mutating func plan(for name: Notification.Name) -> DispatchPlan {
            if let last = lastPlan, last.name == name { return last }
            let plan: DispatchPlan
            if let known = plans[name] {
                plan = known
            } else {
                plan = DispatchPlan(name: name, named: byName[name] ?? [], anyName: anyName)
                // Names nobody observes are not kept (posters may make up any number of them),
                // and the table is bounded for the same reason.
                if !plan.records.isEmpty {
                    if plans.count >= 1024 { plans.removeAll(keepingCapacity: true) }
                    plans[name] = plan
                }
            }
            lastPlan = plan
            return plan
        }
    }

    let registry = TracedMutex(Registry())

    /// Where the center logs notifications discarded because the loop that was to deliver them
    /// shut down first (`.notice`, with the count and the loop's name, once per discarded batch;
    /// never anything per post or per delivery).
    ///
    /// Thread-safety: immutable.
    public let logger: Logger

    /// How many deliveries may wait for one thread (per set of observation modes) before the
    /// center's logger is warned that they are piling up: once per pile-up, with the count and the
    /// loop's name (an observer added with the default `on: .current` from a thread that never runs
    /// its loop keeps every post until it does).
    ///
    /// Thread-safety: a constant.
    public static let pileUpWarningThreshold = 100_000

    /// How many cross-thread deliveries may wait for one observer thread (per set of observation
    /// modes) at once; nil (the default): no limit. A burst to a thread that is merely behind is
    /// not a reason to lose notifications, so none are dropped unless a limit is set; a thread whose
    /// loop does not drain is reported instead (``pileUpWarningThreshold``). With a limit, a
    /// delivery beyond it is not queued: it is counted as discarded in that thread's
    /// ``ThreadNotificationQueue/metrics``, logged at `.warning` (aggregated: the first, then one
    /// entry per 1,024), and a `postAndWait` counts it as not delivered.
    ///
    /// Thread-safety: immutable; read from any thread.
    public let queuedDeliveryLimit: Int?

    /// A new, empty center.
    ///
    /// - Parameters:
    ///   - logger: see ``logger``. The default logs nothing.
    ///   - queuedDeliveryLimit: see ``queuedDeliveryLimit``; nil or at least 1.
    ///
    /// Thread-safety: any thread.
    public init(logger: Logger = .portRunLoopDisabled, queuedDeliveryLimit: Int? = nil) {
        Misuse.check((queuedDeliveryLimit ?? 1) >= 1,
                     "ThreadNotificationCenter: queuedDeliveryLimit must be at least 1, got \(queuedDeliveryLimit ?? 0)")
        self.logger = logger
        self.queuedDeliveryLimit = queuedDeliveryLimit
    }

    /// The queue this center delivers `loop`'s notifications through (created on first use). Its
    /// ``ThreadNotificationQueue/metrics`` are that thread's operator metrics.
    ///
    /// The center keeps the queue while the loop lives: when the loop shuts down (its thread
    /// exited, its ``RunLoopThread`` stopped) the center lets go of it, and so of the loop and its
    /// descriptors, which are freed once nothing else holds them (an observation's token kept past
    /// the exit holds its loop until it is released). Whoever holds the queue still reads its
    /// final ``ThreadNotificationQueue/metrics``; asked for a dead loop's queue, the center makes a
    /// new one and does not keep it.
    ///
    /// Thread-safety: any thread.
    public func queue(for loop: PortRunLoop) -> ThreadNotificationQueue {
        let id = ObjectIdentifier(loop)
        if let existing = registry.withLock({ $0.queues[id] }) { return existing }
        let made = ThreadNotificationQueue(loop: loop, center: self)
        let (queue, kept) = registry.withLock { registry -> (ThreadNotificationQueue, Bool) in
            if let existing = registry.queues[id] { return (existing, false) }
            registry.queues[id] = made
            return (made, true)
        }
        // Told on the loop's thread as it shuts down, while the loop is alive (so `id` is still
        // its); the loop's lock is taken outside the center's.
        if kept, !loop.whenShutDown(notifying: self, { center in
            unsafeDowncast(center, to: ThreadNotificationCenter.self).forgetQueue(of: id)
        }) {
            forgetQueue(of: id)
        }
        return queue
    }

    /// The loop `id` stands for shut down: the center lets go of its queue. The loop's observations
    /// stay in the tables while their tokens live (a post that reaches one counts it as discarded
    /// and ends it, as ``NotificationQueueMetrics/discarded`` says); a token released ends its own.
    private func forgetQueue(of id: ObjectIdentifier) {
        _ = registry.withLock { $0.queues.removeValue(forKey: id) } // released outside the lock
    }

    /// How many loops the center keeps a queue for (the tests' view of what it holds on to).
    ///
    /// Thread-safety: any thread.
    package var loopsWithQueues: Int { registry.withLock { $0.queues.count } }

    /// The number of observations currently registered (ended ones excluded, and those of loops
    /// that shut down; an observation whose observer object was deallocated is removed at the
    /// first delivery attempted after that).
    ///
    /// Thread-safety: any thread.
    public var observationCount: Int {
        let records = registry.withLock { registry in registry.anyName + registry.byName.values.joined() }
        return records.count { $0.isObserving } // each loop's lock taken outside the registry's
    }

    // MARK: - Observing

    /// Observes notifications named `name` (nil: every name) from `sender` (nil: any sender) and
    /// calls `handler` with each one on `loop`'s thread.
    ///
    /// - Parameters:
    ///   - name: the name to observe, or nil for every name.
    ///   - sender: only notifications whose `object` is this sender: a class instance matches by
    ///     identity (held weakly: once it is deallocated the filter matches nothing), a `Hashable`
    ///     value by equality. Any other value is a programmer error (precondition): nothing could
    ///     ever match it.
    ///   - loop: the thread to deliver on (default: the calling thread's loop, created if needed).
    ///     Cross-thread deliveries happen while that loop runs; a loop that never runs receives them
    ///     only when posted on its own thread.
    ///   - modes: the modes cross-thread deliveries wait for (default: the common modes). Not empty.
    ///   - handler: called on `loop`'s thread.
    /// - Returns: the observation's token. Releasing it ends the observation, so keep it. If `loop`
    ///   is already shut down, the token is returned inactive.
    ///
    /// Thread-safety: any thread.
    public func addObserver(forName name: Notification.Name?, object sender: Any? = nil,
                            on loop: PortRunLoop = .current, inModes modes: [RunLoop.Mode] = [.common],
                            using handler: @escaping @Sendable (Notification) -> Void) -> NotificationObservation {
        let filter = SenderFilter(sender, caller: "ThreadNotificationCenter.addObserver(forName:object:on:inModes:using:)")
        let record = makeRecord(name: name, sender: filter, loop: loop, modes: modes, observer: nil,
                                caller: "ThreadNotificationCenter.addObserver(forName:object:on:inModes:using:)") { _, note in
            handler(note)
        }
        register(record)
        return NotificationObservation(record, label: "\(name?.rawValue ?? "any name") on \(loop.name)")
    }

    /// Observes notifications named `name` (nil: every name) from `sender` (nil: any sender) on
    /// behalf of `observer`, calling `handler(observer, notification)` on `loop`'s thread:
    /// `center.addObserver(self, name: .windowDidClose) { me, note in me.windowDidClose(note) }`.
    ///
    /// `observer` is held weakly. The observation ends when it is deallocated (a handler call in
    /// progress holds it, so it cannot be deallocated under its own handler; if that call holds the
    /// last reference, its deinit runs on `loop`'s thread after the handler returns), when the token
    /// is released, or on ``removeObserver(_:name:object:)``. Parameters as in
    /// ``addObserver(forName:object:on:inModes:using:)``.
    ///
    /// Thread-safety: any thread. The observer is touched (loaded from its weak reference) only on
    /// `loop`'s thread.
    public func addObserver<Observer: AnyObject>(_ observer: Observer, name: Notification.Name?, object sender: Any? = nil,
                                                 on loop: PortRunLoop = .current, inModes modes: [RunLoop.Mode] = [.common],
                                                 _ handler: @escaping @Sendable (Observer, Notification) -> Void) -> NotificationObservation {
        let filter = SenderFilter(sender, caller: "ThreadNotificationCenter.addObserver(_:name:object:on:inModes:_:)")
        let record = makeRecord(name: name, sender: filter, loop: loop, modes: modes, observer: observer,
                                caller: "ThreadNotificationCenter.addObserver(_:name:object:on:inModes:_:)") { object, note in
            handler(unsafeDowncast(object!, to: Observer.self), note)
        }
        register(record)
        return NotificationObservation(record, label: "\(type(of: observer)) for \(name?.rawValue ?? "any name") on \(loop.name)")
    }

    /// Ends the observation `observation` stands for (same as ``NotificationObservation/remove()``).
    ///
    /// Thread-safety: any thread.
    public func removeObserver(_ observation: NotificationObservation) {
        observation.remove()
    }

    /// Ends every observation made for `observer` with ``addObserver(_:name:object:on:inModes:_:)``
    /// that matches `name` (nil: any) and `sender` (nil: any). Once this returns, none of their
    /// handlers starts again. Safe to call from `observer`'s deinit, as in Foundation code.
    ///
    /// Thread-safety: any thread.
    public func removeObserver(_ observer: AnyObject, name: Notification.Name? = nil, object sender: Any? = nil) {
        let id = ObjectIdentifier(observer)
        let filter = SenderFilter(sender, caller: "ThreadNotificationCenter.removeObserver(_:name:object:)")
        let doomed = registry.withLock { registry -> [ObserverRecord] in
            (registry.anyName + registry.byName.values.joined()).filter { record in
                record.observerID == id
                    && (name == nil || record.name == name)
                    && (sender == nil || record.sender.isSame(as: filter))
            }
        }
        for record in doomed { record.end() }
    }

    // MARK: - Registry

    func makeRecord(name: Notification.Name?, sender: SenderFilter, loop: PortRunLoop, modes: [RunLoop.Mode],
                    observer: AnyObject?, caller: @autoclosure () -> String,
                    handler: @escaping @Sendable (AnyObject?, Notification) -> Void) -> ObserverRecord {
        Misuse.check(!modes.isEmpty, "\(caller()): the mode list is empty, so nothing could ever be delivered")
        let lane = queue(for: loop).lane(for: ModeSet(modes))
        let sequence = registry.withLock { registry -> UInt64 in
            defer { registry.nextSequence += 1 }
            return registry.nextSequence
        }
        return ObserverRecord(sequence: sequence, name: name, sender: sender, loop: loop, lane: lane,
                              observer: observer, handler: handler,
                              onEnd: { [weak self] record in self?.unregister(record) })
    }

    /// Adds `record` to the tables (or ends it at once when its loop is already shut down).
    func register(_ record: ObserverRecord) {
        guard !record.loop.isShutDown else { record.end(); return }
        registry.withLock { registry in
            guard record.isActive else { return }
            registry.dropPlans()
            if let name = record.name {
                registry.byName[name, default: []].append(record)
            } else {
                registry.anyName.append(record)
            }
        }
    }

    private func unregister(_ record: ObserverRecord) {
        registry.withLock { registry in
            registry.dropPlans()
            if let name = record.name {
                registry.byName[name]?.removeAll { $0 === record }
                if registry.byName[name]?.isEmpty == true { registry.byName[name] = nil }
            } else {
                registry.anyName.removeAll { $0 === record }
            }
        }
    }

    /// The dispatch plan for posts of `name` (one registry lock; see ``DispatchPlan``).
    func plan(for name: Notification.Name) -> DispatchPlan {
        registry.withLock { $0.plan(for: name) }
    }
}
