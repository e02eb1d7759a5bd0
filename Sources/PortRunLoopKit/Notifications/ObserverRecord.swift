import Foundation

/// One observation registered with a ``ThreadNotificationCenter``: what it matches, where it is
/// delivered, and the gate that makes removal exact.
///
/// Every handler call for a record happens on the record's loop thread (inline when that thread
/// posts, from its ``DeliveryLane`` otherwise), and only between `gate.tryEnter()` and
/// `gate.exit()`. Ending the record closes the gate, so once ``end()`` returns no handler call
/// starts; a call that already started finishes, and ``waitForRunningHandlers(deadline:)`` waits for it.
///
/// Thread-safety: `@unchecked Sendable`; immutable apart from the gate (atomic), the weak
/// observer, which is loaded only on the loop's thread, and `pinnedBatch`, guarded by the lane's
/// lock.
final class ObserverRecord: @unchecked Sendable {
    let sequence: UInt64
    let name: Notification.Name?
    let sender: SenderFilter
    let loop: PortRunLoop
    let lane: DeliveryLane
    let gate = DeliveryGate()
    /// The observer object's identity, for `removeObserver(_:name:object:)`; nil for closures.
    let observerID: ObjectIdentifier?
    /// Loaded on the loop's thread only, so a last strong reference taken here is released there.
    private let observer: WeakObject?
    private let handler: @Sendable (AnyObject?, Notification) -> Void
    /// Called once when the record ends, to take it out of its center's tables.
    private let onEnd: @Sendable (ObserverRecord) -> Void
    /// The batch of `lane` this record was last pinned in (``DeliveryLane``, "Pins"). Guarded by
    /// `lane`'s lock.
    var pinnedBatch: UInt64 = 0

    init(sequence: UInt64, name: Notification.Name?, sender: SenderFilter, loop: PortRunLoop, lane: DeliveryLane,
         observer: AnyObject?, handler: @escaping @Sendable (AnyObject?, Notification) -> Void,
         onEnd: @escaping @Sendable (ObserverRecord) -> Void) {
        self.sequence = sequence
        self.name = name
        self.sender = sender
        self.loop = loop
        self.lane = lane
        self.observerID = observer.map(ObjectIdentifier.init)
        self.observer = observer.map(WeakObject.init)
        self.handler = handler
        self.onEnd = onEnd
    }

    /// False once the observation ended.
    var isActive: Bool { !gate.isClosed }

    /// Whether a post from `key` passes this observation's sender filter. With `checkSender` false
    /// (no observation of the post's plan filters on the sender) the filter is not consulted.
    @inline(__always) func accepts(_ key: SenderKey, checkSender: Bool) -> Bool {
        !checkSender || sender.matches(key)
    }

    /// Ends the observation: no handler call starts once this returns. Idempotent; any thread,
    /// including from inside the handler.
    func end() {
        guard gate.close() else { return }
        onEnd(self)
    }

    /// Loop thread only: calls the handler with the boxed notification (read in place, not copied
    /// out) unless the observation ended (or its observer object is gone, which ends it). Returns
    /// true when the handler was called.
    ///
    /// With `restoringContext` the handler runs in the poster's context (the box's). A lane's
    /// drains pass it: they run as work queued without a context, so nothing is bound around them
    /// and a box without one needs nothing done. Inline deliveries do not: they run in the poster's
    /// own call, in its context already.
    func deliver(_ box: NotificationBox, restoringContext: Bool = false) -> Bool {
        guard gate.tryEnter() else { return false }
        defer { gate.exit() }
        guard restoringContext else { return callHandler(box) }
        return loop.withCallerContext(box.context, ambient: false) { callHandler(box) }
    }

    @inline(__always) private func callHandler(_ box: NotificationBox) -> Bool {
        guard let observer else {
            handler(nil, box.notification)
            return true
        }
        // A strong reference for the duration of the call: the object cannot be deallocated while
        // its handler runs (the teardown race: an observer freed under its running handler). If that is the last reference, deinit runs here,
        // on this thread, after the handler returned.
        guard let object = observer.object else {
            end()
            return false
        }
        handler(object, box.notification)
        return true
    }

    /// Waits until no handler call of this observation is running. On the observation's own thread
    /// it returns true at once: any call in flight is further down this thread's stack.
    func waitForRunningHandlers(deadline: Double) -> Bool {
        if loop.isCurrentThread { return true }
        return gate.waitForHandlers(deadlineMonotonic: deadline)
    }
}
