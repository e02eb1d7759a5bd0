/// The one libevent timer a loop keeps armed for its next wake-up: the earliest of the run's
/// deadline and the running mode's earliest timer (the timers themselves are in the loop's own
/// heaps; see ``TimerHeap``). Re-armed (`event_add`) only when that time changes, so a loop that
/// sleeps and wakes repeatedly with the same deadline makes no libevent call for it.
///
/// Thread-safety: the loop's thread only.
final class WakeTimer: LibEventReceiver {
    private var event: LoopEvent?
    /// The monotonic time the event is armed for, or nil when it is not pending.
    private var armedFor: Double?

    init(base: EventBase) throws(PortRunLoopError) {
        super.init()
        event = try LoopEvent(base: base, flags: [], receiver: self)
    }

    /// How close a new wake-up time may be to the armed one and still keep it: far below the
    /// millisecond epoll waits in (libevent rounds the timeout up to whole milliseconds), and far
    /// above the jitter of a deadline recomputed from the wall clock on every sleep.
    static let keepWithin = 50e-6

    /// Arms the timer for the monotonic time `deadline` (`.infinity`: disarms it).
    func arm(for deadline: Double) {
        guard let event else { return }
        if let armedFor, abs(armedFor - deadline) <= Self.keepWithin { return }
        if armedFor == nil && deadline == .infinity { return }
        if deadline == .infinity {
            event.remove()
            armedFor = nil
            return
        }
        do {
            try event.add(timeoutSeconds: deadline - System.monotonicSeconds())
            armedFor = deadline
        } catch {
            // event_add of a pure timer fails only on allocation failure: the wait then lasts
            // until another event, and the next turn tries again.
            armedFor = nil
        }
    }

    override func eventFired(_ flags: EventFlags) {
        armedFor = nil
        event?.firedOnce()
    }

    /// Frees the event (before the base) and breaks the event → receiver cycle.
    func detach() {
        event?.remove()
        event = nil
        armedFor = nil
    }
}
