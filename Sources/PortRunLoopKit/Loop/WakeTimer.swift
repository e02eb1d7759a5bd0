/// The one timer a loop keeps for its next wake-up: the earliest of the run's deadline and the
/// running mode's earliest timer (the timers themselves are in the loop's own heaps; see
/// ``TimerHeap``).
///
/// It is a timerfd, registered once as an edge-triggered read event of the loop's base and set
/// with `timerfd_settime` to an absolute monotonic time, only when that time changes: a loop that
/// sleeps and wakes repeatedly with the same deadline makes no call for it, and the loop's
/// `epoll_wait` never carries a timeout.
///
/// A deadline that moves later on every sleep (a request's receive timeout, taken afresh for each
/// request; a connection's idle timeout pushed back by each request) would set the timer on every
/// sleep. So an earlier wake-up already set is kept while it is more than ``keepEarlierBeyond``
/// away: when a later sleep finds it closer than that, the timer is set for the real time then. In
/// a steady stream of requests the timer is set once per receive timeout, not once per request,
/// and never fires early; a sleep that outlasts the kept time is woken early once, and the loop
/// goes round and sleeps again. A deadline earlier than the one set is always set at once.
///
/// Why not a libevent timer:
/// - **Precision.** libevent passes its earliest timeout to `epoll_wait` in whole milliseconds,
///   rounded up, so a timer fired up to a millisecond late; a timerfd expires at its nanosecond
///   deadline (the kernel's timer slack aside), and the loop wakes then.
/// - **Cost per event.** With a libevent timer pending, every dispatch reads the clock, peeks its
///   min-heap and converts the timeout, and the kernel arms a timer for each `epoll_wait` that
///   blocks; an fd-heavy loop with timers far in the future paid that on every event.
///
/// Like the ``Doorbell``, the timerfd is never read: epoll reports each expiry as a new edge
/// (`timerfd_settime` resets the expiry count, and each expiry wakes the epoll set), and the loop
/// goes back to its heaps to see what is due. A wake-up that is no longer needed (the run it was
/// set for returned, the timer was invalidated) is left set rather than cancelled with a system
/// call: it fires at most once, and only makes a later wait return early; the loop then goes round
/// and sleeps again.
///
/// Thread-safety: the loop's thread only.
final class WakeTimer: LibEventReceiver {
    private let fileDescriptor: Int32
    private var event: LoopEvent?
    /// The monotonic time the timerfd is set to expire at, or nil when it is not set or expired.
    private var armedFor: Double?

    init(base: EventBase) throws(PortRunLoopError) {
        fileDescriptor = try System.makeTimerfd()
        super.init()
        do {
            event = try LoopEvent.edges(of: fileDescriptor, base: base, receiver: self)
        } catch {
            System.closeDescriptor(fileDescriptor)
            throw error
        }
    }

    deinit { System.closeDescriptor(fileDescriptor) }

    /// How close a new wake-up time may be to the set one and still keep it: the jitter of a
    /// deadline recomputed from the wall and monotonic clocks on every sleep (tens of
    /// nanoseconds, a few microseconds when the thread is preempted between the two reads), far
    /// below anything a timer's tolerance or the loop's turn could show.
    static let keepWithin = 5e-6

    /// How far ahead an earlier wake-up already set must still be for a later deadline to keep it
    /// (see the type's notes): far enough that a stream of requests sets the timer about once per
    /// deadline's length, near enough that a sleep outlasting it is rare and costs one early wake.
    static let keepEarlierBeyond = 10e-3

    /// Sets the timer for the monotonic time `deadline` (the loop's clock reads `now`); `.infinity`
    /// leaves it as it is (see the type's notes on a wake-up no longer needed and on an earlier one
    /// kept). Returns whether it set the timer (a system call).
    func arm(for deadline: Double, now: Double) -> Bool {
        guard event != nil, deadline != .infinity else { return false }
        if let armedFor {
            if abs(armedFor - deadline) <= Self.keepWithin { return false }
            if armedFor < deadline, armedFor - now > Self.keepEarlierBeyond { return false }
        }
        System.setTimerfd(fileDescriptor, deadline: deadline)
        armedFor = deadline
        return true
    }

    override func eventFired(_ flags: EventFlags) {
        armedFor = nil
    }

    /// Frees the event (before the base) and breaks the event → receiver cycle.
    func detach() {
        event?.remove()
        event = nil
        armedFor = nil
    }
}
