import CBenchNative

/// The libevent floor of the timer lateness, written in C
/// (`Sources/CBenchNative/cbench_libevent_timer_lateness.c`: one `evtimer_add` on a bare
/// `event_base`, then `event_base_loop(EVLOOP_ONCE)` until it fired), on a ``SampleThread``.
///
/// Thread-safety: `Sendable`; driven by one thread (see ``TimerLatenessPeer``).
public final class LibEventTimerLateness: TimerLatenessPeer, @unchecked Sendable {
    private let thread = SampleThread()
    private var base: OpaquePointer? // sample thread only

    /// Makes the base on a new thread.
    ///
    /// Thread-safety: any thread.
    public init() {
        thread.run {
            base = cbench_libevent_timer_lateness_create()
            precondition(base != nil, "cbench_libevent_timer_lateness_create failed")
        }
    }

    /// One timer (see ``TimerLatenessPeer/lateness(afterNanoseconds:)``).
    ///
    /// Thread-safety: the driving thread.
    public func lateness(afterNanoseconds delay: Int64) -> Int64 {
        thread.run { cbench_libevent_timer_lateness_sample(base, delay) }
    }

    /// Ends the loop thread (see ``TimerLatenessPeer/shutDown()``).
    ///
    /// Thread-safety: the driving thread, once.
    public func shutDown() {
        thread.run { cbench_libevent_timer_lateness_destroy(base) }
        thread.stop()
    }
}
