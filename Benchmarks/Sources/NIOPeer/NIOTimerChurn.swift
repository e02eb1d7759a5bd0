import BenchSupport
import NIOCore
import NIOPosix

/// SwiftNIO: the timer churn on ONE `EventLoop`. Each turn is a `scheduleTask(in: .zero)`; it
/// schedules `scheduleTask(in: .seconds(30))` timeouts and cancels each at once, then schedules
/// the next turn. A sample starts with `execute` and ends with a ``Completion``.
///
/// Thread-safety: `Sendable`; driven by one thread (see ``TimerChurnPeer``); the state is touched
/// only on the event loop (and by the driver after ``Completion/wait()``).
public final class NIOTimerChurn: TimerChurnPeer, @unchecked Sendable {
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let loop: any EventLoop
    private let done = Completion()
    private var turnsLeft = 0
    private var timersPerTurn = 0
    private var timers = 0

    /// Starts the event loop thread.
    ///
    /// Thread-safety: any thread.
    public init() { loop = group.next() }

    /// Runs one sample on the peer's loop thread (see ``TimerChurnPeer/runSample(turns:timersPerTurn:)``).
    ///
    /// Thread-safety: the driving thread; blocks until the sample ended.
    public func runSample(turns: Int, timersPerTurn: Int) -> Int {
        loop.execute { [self] in
            turnsLeft = turns
            self.timersPerTurn = timersPerTurn
            timers = 0
            scheduleTurn()
        }
        done.wait()
        return timers
    }

    private func scheduleTurn() {
        _ = loop.scheduleTask(in: .zero) { [self] in turn() }
    }

    private func turn() {
        timers += 1
        for _ in 1..<timersPerTurn {
            loop.scheduleTask(in: .seconds(30)) {}.cancel()
            timers += 1
        }
        turnsLeft -= 1
        if turnsLeft == 0 { done.signal() } else { scheduleTurn() }
    }

    /// Ends the loop thread (see ``TimerChurnPeer/shutDown()``).
    ///
    /// Thread-safety: the driving thread, once.
    public func shutDown() { try? group.syncShutdownGracefully() }
}
