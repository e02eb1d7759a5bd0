import PortRunLoopKit

extension BusNotificationCenter {
    /// Whether the center is suspended (Apple's `suspended`): while it is, each observation treats
    /// arriving notifications per its ``BusSuspensionBehavior`` (notifications posted with
    /// `deliverImmediately: true` are delivered regardless). On resume every observation's held
    /// notifications are delivered, in arrival order, before anything that arrives later.
    ///
    /// The change is applied on ``loop``'s thread, in order with arriving notifications: set from
    /// another thread, the setter waits (at most ``callTimeout``) for the loop to apply it, so a
    /// notification received after it returns sees the new state; if the loop does not take it in
    /// time it is applied when the loop next runs. The getter returns the last value set.
    ///
    /// Thread-safety: any thread.
    public var suspended: Bool {
        get { state.withLock { $0.requestedSuspension } }
        set {
            state.withLock { $0.requestedSuspension = newValue }
            if loop.isCurrentThread {
                applySuspension()
                return
            }
            do {
                try loop.performAndWait(timeout: callTimeout) { self.applySuspension() }
            } catch {
                loop.perform { self.applySuspension() }
            }
        }
    }

    /// Brings the loop's suspension state to the requested one (loop thread); resuming delivers
    /// whatever observations held.
    private func applySuspension() {
        let requested = state.withLock { $0.requestedSuspension }
        guard requested != loopState.suspended else { return }
        loopState.suspended = requested
        guard !requested else { return }
        let records = state.withLock { $0.observations }
        var delivered = 0
        for record in records { delivered += flushHeld(record) }
        if delivered > 0 { state.withLock { $0.metrics.delivered += delivered } }
    }
}
