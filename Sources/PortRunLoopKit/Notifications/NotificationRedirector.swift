import DequeModule
import Foundation
import Synchronization

/// The per-object technique of Apple's *Delivering Notifications To Particular Threads*, as a
/// reusable type: it captures notifications on whatever thread they are posted and processes them
/// on one target thread.
///
/// It holds exactly the parts the article lists: the array of notifications waiting (a `Deque`, the
/// array with O(1) removal at the front), the lock that guards it (the article's `NSLock`; here the
/// library's mutex), the target thread (its
/// ``PortRunLoop``, the article's `notificationThread`), and a ``MessagePort`` scheduled in that loop
/// (the article's `notificationPort`, whose delegate this object is).
///
/// - ``process(_:)`` (the article's `processNotification:`) may be called on any thread. On the target
///   thread it handles the notification at once. On any other thread it appends it to the array
///   under the lock and signals the port with a zero-timeout send.
/// - ``handleMessage(_:)`` (the article's `handleMachMessage:`) runs on the target thread when the
///   signal arrives and drains the array until it is empty, unlocking around each handler call.
///   Because it always drains everything, a signal that is dropped because the port's queue is full
///   (which the article warns about) loses nothing: the signal already queued will drain it. Per posting
///   thread, notifications are handled in the order they were processed.
/// - Give it a closure, or subclass it and override ``handle(_:)`` (the article's "process the
///   notification here"). Subclasses restate `@unchecked Sendable`; state they touch only in
///   `handle(_:)` is confined to the target thread.
/// - ``observe(_:object:in:)`` registers it with a Foundation center ("register for the notification
///   normally"). ``invalidate()`` (or deinit) stops it: once it returns no handler starts.
///
/// Its limits are the article's: one handler per object, one port per object. ``ThreadNotificationCenter``
/// is the general form.
///
/// Thread-safety: `Sendable`. ``process(_:)``, ``invalidate()``, ``observe(_:object:in:)`` and
/// ``pendingCount`` from any thread; ``handleMessage(_:)`` and ``handle(_:)`` run on the target
/// thread (checked by a precondition).
open class NotificationRedirector: MessagePortDelegate, @unchecked Sendable {
    /// The notifications waiting for the target thread, behind their lock (the article's
    /// `notificationLock`).
    private let notifications = TracedMutex<Deque<NotificationBox>>([])
    /// The target thread's loop (the article's `notificationThread`).
    ///
    /// Thread-safety: immutable.
    public let loop: PortRunLoop
    /// The port that signals the target thread (the article's `notificationPort`), scheduled in
    /// ``loop``. Its ``MessagePort/statistics`` show sent and rejected (dropped) signals.
    ///
    /// Thread-safety: immutable; the port is `Sendable`.
    public let port: MessagePort
    private let handler: (@Sendable (Notification) -> Void)?
    /// Closed by ``invalidate()``, or by the port's invalidation (its loop shut down): no handler
    /// starts and ``process(_:)`` queues nothing once it is closed.
    private let gate = DeliveryGate()
    private let foundationTokens = TracedMutex<[FoundationRegistration]>([])
    private let discarded = Atomic<Int>(0)

    /// Sets up the redirection to `loop`'s thread (the article's `setUpThreadingSupport`).
    ///
    /// - Parameters:
    ///   - loop: the target thread's loop (default: the calling thread's, as in the article). The port
    ///     is scheduled there by the loop itself, on its own thread.
    ///   - modes: the modes the port is scheduled in (default: the common modes, as in the article).
    ///   - queueLimit: the port's queue limit (default: Mach's 5). Any limit works: drained signals
    ///     never lose notifications.
    ///   - handler: called with each notification on the target thread. Without it, subclass and
    ///     override ``handle(_:)``.
    ///
    /// Thread-safety: any thread.
    public init(loop: PortRunLoop = .current, modes: [RunLoop.Mode] = [.common],
                queueLimit: Int = MessagePort.defaultQueueLimit,
                handler: (@Sendable (Notification) -> Void)? = nil) {
        Misuse.check(!modes.isEmpty, "NotificationRedirector: the mode list is empty, so the port could never fire")
        self.loop = loop
        self.port = MessagePort(queueLimit: queueLimit)
        self.handler = handler
        port.delegate = self
        // The port is invalidated with its loop (the thread exited or was stopped): from then on
        // nothing could drain what `process(_:)` queued, so it queues nothing more, and what
        // waits is dropped and counted, as by ``invalidate()``.
        port.onInvalidation { [weak self, gate] in
            gate.close()
            self?.dropWaitingAndRegistrations()
        }
        for mode in modes { loop.add(port, forMode: mode) }
    }

    deinit {
        invalidate()
    }

    /// Redirects `notification` to the target thread (the article's `processNotification:`): handled at
    /// once when called there, otherwise queued and the port signalled with a zero-timeout send.
    /// After ``invalidate()``, or once the target loop has shut down, it only counts the
    /// notification in ``discardedCount``.
    ///
    /// Thread-safety: any thread.
    public final func process(_ notification: Notification) {
        if loop.isCurrentThread {
            deliver(notification)
            return
        }
        guard !gate.isClosed else {
            discarded.add(1, ordering: .relaxed)
            return
        }
        let box = NotificationBox(notification, context: CallerContext.capture())
        // Checked again under the lock: an invalidation that closed the gate since has taken (or
        // will find) only what was queued before it.
        let queued = notifications.withLock { notifications -> Bool in
            guard !gate.isClosed else { return false }
            notifications.append(box)
            return true
        }
        guard queued else {
            discarded.add(1, ordering: .relaxed)
            return
        }
        // Zero timeout: if the port's queue is full, a signal is already on its way and the
        // drain it triggers will find this notification. The signal carries no context: each
        // notification carries its own.
        port.send(before: Date(), context: nil, doorbell: true)
    }

    /// Drains the waiting notifications (the article's `handleMachMessage:`): takes the first one under
    /// the lock, unlocks, handles it, locks again, until the array is empty. The message's contents
    /// are ignored: it is only a signal.
    ///
    /// Thread-safety: the target thread only (precondition); the port calls it there.
    public final func handleMessage(_ message: MessagePort.Message) {
        loop.preconditionOnLoopThread("NotificationRedirector.handleMessage(_:)")
        let ambient = CallerContext.isSet
        while let next = notifications.withLock({ $0.popFirst() }) {
            // In the poster's context (and in none for a poster that had none).
            loop.withCallerContext(next.context, ambient: ambient) { deliver(next.notification) }
        }
    }

    /// Handles one notification on the target thread (the article's "process the notification here").
    /// The default calls the closure given to `init`; subclasses override it instead.
    ///
    /// Thread-safety: called on the target thread only.
    open func handle(_ notification: Notification) {
        guard let handler else {
            Misuse.fail("NotificationRedirector: no handler; pass one to init(loop:modes:queueLimit:handler:) or override handle(_:) in a subclass")
        }
        handler(notification)
    }

    /// Registers ``process(_:)`` with a Foundation center for `name` from `sender` (the article's "register
    /// for the notification normally"). Removed by ``invalidate()``.
    ///
    /// Thread-safety: any thread.
    public func observe(_ name: Notification.Name?, object sender: Any? = nil, in center: NotificationCenter = .default) {
        let token = center.addObserver(forName: name, object: sender, queue: nil) { [weak self] note in
            self?.process(note)
        }
        let keep: Bool = foundationTokens.withLock { tokens in
            guard !gate.isClosed else { return false }
            tokens.append(FoundationRegistration(center: center, token: token))
            return true
        }
        if !keep { center.removeObserver(token) }
    }

    /// How many notifications wait for the target thread right now.
    ///
    /// Thread-safety: any thread.
    public var pendingCount: Int {
        notifications.withLock { $0.count }
    }

    /// True until ``invalidate()``, or until the target loop shuts down (which invalidates the port).
    ///
    /// Thread-safety: any thread.
    public var isValid: Bool { !gate.isClosed }

    /// Notifications that were never handled: processed after the redirector became invalid, or
    /// waiting when ``invalidate()`` or the target loop's shutdown dropped them (logged then, at
    /// `.notice`, with the count).
    ///
    /// Thread-safety: any thread.
    public var discardedCount: Int { discarded.load(ordering: .relaxed) }

    /// Stops redirecting: once this returns no handler starts (one running on the target thread
    /// finishes; ``waitForRunningHandler(timeout:)`` waits for it). Waiting notifications are
    /// dropped, the port is invalidated, and Foundation registrations made by ``observe(_:object:in:)``
    /// are removed. Idempotent.
    ///
    /// Thread-safety: any thread, including from inside ``handle(_:)``.
    public func invalidate() {
        // Every step is idempotent (the gate may have been closed already, by the port's
        // invalidation; a second call finds nothing waiting and no registration left).
        gate.close()
        dropWaitingAndRegistrations()
        port.invalidate()
    }

    /// Once the gate is closed: drops (and counts, and logs) the notifications waiting, and removes
    /// the Foundation registrations. Idempotent.
    private func dropWaitingAndRegistrations() {
        // Released after the lock: a notification's contents may run arbitrary deinit code.
        let dropped = notifications.withLock { notifications in
            defer { notifications.removeAll() }
            return notifications
        }
        if !dropped.isEmpty {
            discarded.add(dropped.count, ordering: .relaxed)
            loop.logger.notice("NotificationRedirector invalidated with notifications waiting; they were discarded", metadata: [
                LogKey.loop: "\(loop.name)", LogKey.discarded: "\(dropped.count)",
            ])
        }
        let tokens = foundationTokens.withLock { tokens in
            defer { tokens.removeAll() }
            return tokens
        }
        for registration in tokens { registration.center.removeObserver(registration.token) }
    }

    /// Waits until no ``handle(_:)`` call is running; on the target thread it returns at once. False
    /// on timeout.
    ///
    /// Thread-safety: any thread.
    @discardableResult
    public func waitForRunningHandler(timeout: Duration? = nil) -> Bool {
        if loop.isCurrentThread { return true }
        return gate.waitForHandlers(deadlineMonotonic: timeout.map { System.monotonicSeconds() + $0.seconds } ?? .infinity)
    }

    private func deliver(_ notification: Notification) {
        guard gate.tryEnter() else { return }
        defer { gate.exit() }
        handle(notification)
    }
}

/// A Foundation observer registration made by ``NotificationRedirector/observe(_:object:in:)``.
///
/// Thread-safety: `@unchecked Sendable`: the token is only handed back to its own (thread-safe) center.
private struct FoundationRegistration: @unchecked Sendable {
    let center: NotificationCenter
    let token: any NSObjectProtocol
}
