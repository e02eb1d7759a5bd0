import CBenchNative

/// The libevent floor of the timer churn, written in C
/// (`Sources/CBenchNative/cbench_libevent_timer_churn.c`: `evtimer_new`, `evtimer_add`,
/// `event_del`, `event_free` on a bare `event_base`), on a ``SampleThread``.
///
/// Thread-safety: `Sendable`; driven by one thread (see ``TimerChurnPeer``).
public final class LibEventTimerChurn: TimerChurnPeer, @unchecked Sendable {
    private let thread = SampleThread()
    private var churn: OpaquePointer? // sample thread only

    /// Makes the base on a new thread.
    ///
    /// Thread-safety: any thread.
    public init() {
        thread.run {
            churn = cbench_libevent_timer_churn_create()
            precondition(churn != nil, "cbench_libevent_timer_churn_create failed")
        }
    }

    /// Runs one sample on the peer's loop thread (see ``TimerChurnPeer/runSample(turns:timersPerTurn:)``).
    ///
    /// Thread-safety: the driving thread; blocks until the sample ended.
    public func runSample(turns: Int, timersPerTurn: Int) -> Int {
        thread.run { cbench_libevent_timer_churn_run(churn, turns, Int32(timersPerTurn)) }
    }

    /// Ends the loop thread (see ``TimerChurnPeer/shutDown()``).
    ///
    /// Thread-safety: the driving thread, once.
    public func shutDown() {
        thread.run { cbench_libevent_timer_churn_destroy(churn) }
        thread.stop()
    }
}
