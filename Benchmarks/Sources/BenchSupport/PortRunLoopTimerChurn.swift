import Foundation
import PortRunLoopKit

/// Ours: the timer churn on a ``PortRunLoop`` of its own thread (a ``SampleThread``) driven by
/// `loop.run()`. Each turn is a `RunLoopTimer` due now; its block (owner-thread work) makes
/// `RunLoopTimer(fireAt: now + 30 s)`s, adds each with `loop.add(_:forMode: .default)` and
/// invalidates it, then adds the next turn's timer, or calls `loop.stop()` after the last turn.
///
/// Thread-safety: `Sendable`; driven by one thread (see ``TimerChurnPeer``); everything else is
/// touched only on the sample thread.
public final class PortRunLoopTimerChurn: TimerChurnPeer, @unchecked Sendable {
    private let thread = SampleThread()
    // Sample thread only:
    private var loop: PortRunLoop!
    private var turnsLeft = 0
    private var timersPerTurn = 0
    private var timers = 0

    /// Makes the loop on a new thread.
    ///
    /// Thread-safety: any thread.
    public init() throws {
        try thread.runThrowing { loop = try PortRunLoop.forCurrentThread() }
    }

    /// Runs one sample on the peer's loop thread (see ``TimerChurnPeer/runSample(turns:timersPerTurn:)``).
    ///
    /// Thread-safety: the driving thread; blocks until the sample ended.
    public func runSample(turns: Int, timersPerTurn: Int) -> Int {
        thread.run {
            turnsLeft = turns
            self.timersPerTurn = timersPerTurn
            timers = 0
            scheduleTurn()
            loop.run()
            return timers
        }
    }

    private func scheduleTurn() {
        loop.add(RunLoopTimer(fireAt: Date()) { [self] _ in turn() }, forMode: .default)
    }

    private func turn() {
        timers += 1
        for _ in 1..<timersPerTurn {
            let timeout = RunLoopTimer(fireAt: Date(timeIntervalSinceNow: 30)) { _ in }
            loop.add(timeout, forMode: .default)
            timeout.invalidate()
            timers += 1
        }
        turnsLeft -= 1
        if turnsLeft == 0 { loop.stop() } else { scheduleTurn() }
    }

    /// Ends the loop thread (see ``TimerChurnPeer/shutDown()``).
    ///
    /// Thread-safety: the driving thread, once.
    public func shutDown() { thread.stop() }
}
