import Foundation
import PortRunLoopKit

/// Ours: a `RunLoopTimer(fireAt:)` added to the ``PortRunLoop`` of its own thread (a
/// ``SampleThread``), which then runs `loop.run()` until the timer fired and the mode ran dry.
/// Lateness is measured on the wall clock, the clock a timer's fire date is on.
///
/// Thread-safety: `Sendable`; driven by one thread (see ``TimerLatenessPeer``); the loop is
/// touched only on the sample thread.
public final class PortRunLoopTimerLateness: TimerLatenessPeer, @unchecked Sendable {
    private let thread = SampleThread()
    // Sample thread only:
    private var loop: PortRunLoop!
    private var late: Int64 = -1

    /// Makes the loop on a new thread.
    ///
    /// Thread-safety: any thread.
    public init() throws {
        try thread.runThrowing { loop = try PortRunLoop.forCurrentThread() }
    }

    /// One timer (see ``TimerLatenessPeer/lateness(afterNanoseconds:)``).
    ///
    /// Thread-safety: the driving thread.
    public func lateness(afterNanoseconds delay: Int64) -> Int64 {
        thread.run {
            let due = Date(timeIntervalSinceNow: Double(delay) / 1e9)
            late = -1
            loop.add(RunLoopTimer(fireAt: due) { [self] _ in late = Int64(Date().timeIntervalSince(due) * 1e9) },
                     forMode: .default)
            loop.run()
            return late
        }
    }

    /// Ends the loop thread (see ``TimerLatenessPeer/shutDown()``).
    ///
    /// Thread-safety: the driving thread, once.
    public func shutDown() { thread.stop() }
}
