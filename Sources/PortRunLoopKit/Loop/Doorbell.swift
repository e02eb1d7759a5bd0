/// How other threads wake a parked loop: an eventfd the loop watches, edge-triggered.
///
/// A producer that finds the loop parked (``Inbox/parked``) rings with one `write` system call: no
/// lock and no libevent call on its side (the loop's base is lock-free; see ``EventBase``). The loop
/// never reads the eventfd: edge-triggered epoll reports every write as a new event, so the counter
/// only grows (by one per time the loop actually slept), and reading it back would cost the loop a
/// system call per wake-up for nothing. A ring is only a wake-up, never a count of work: the loop
/// drains its whole inbox each time it wakes.
///
/// Thread-safety: ``ring()`` from any thread; everything else on the loop's thread.
final class Doorbell {
    let fileDescriptor: Int32
    private var event: LoopEvent?

    init(base: EventBase) throws(PortRunLoopError) {
        fileDescriptor = try System.makeEventfd()
        do {
            let event = try LoopEvent(base: base, fileDescriptor: fileDescriptor,
                                      flags: [.read, .persist, .edgeTriggered], receiver: LibEventReceiver())
            try event.add()
            self.event = event
        } catch {
            System.closeDescriptor(fileDescriptor)
            throw error
        }
    }

    deinit {
        event = nil // event_free before the fd is closed
        System.closeDescriptor(fileDescriptor)
    }

    /// Wakes the loop if it is in `epoll_wait`, or makes its next wait return at once.
    @inline(__always) func ring() { System.signalEventfd(fileDescriptor) }
}

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
