import Benchmark
import PeerSupport

/// One peer of the timer churn: the cost of a connection timeout per request. On one loop thread,
/// each *turn* is one zero-delay timer that fires; its handler schedules
/// `timersPerTurn - 1` timers 30 s away and cancels each at once (a request that finished before
/// its timeout), then schedules the next turn's zero-delay timer. Every timer counts once, whether
/// it fired or was cancelled.
///
/// Thread-safety: `Sendable`; ``runSample(turns:timersPerTurn:)`` and ``shutDown()`` from the
/// driving thread, one at a time.
public protocol TimerChurnPeer: AnyObject, Sendable {
    /// Runs `turns` turns on the peer's loop thread and returns the timers handled
    /// (`turns * timersPerTurn`).
    ///
    /// Thread-safety: the driving thread; blocks until the sample ended.
    func runSample(turns: Int, timersPerTurn: Int) -> Int
    /// Ends the loop thread.
    ///
    /// Thread-safety: the driving thread, once.
    func shutDown()
}

extension Scenarios {
    /// Turns per timer-churn sample: 10k turns of ``timersPerTurn`` = 100k timers per sample, 1M
    /// over the benchmark's 10 samples.
    ///
    /// Thread-safety: a constant.
    public static let timerChurnTurns = 10_000
    /// Timers per turn: 9 cancelled 30 s timeouts and 1 zero-delay timer that fires.
    ///
    /// Thread-safety: a constant.
    public static let timersPerTurn = 10

    /// Registers `TimerChurn.<peer>`. Reports wall clock, throughput, mallocs, context switches and
    /// `operations` (timers in the sample).
    ///
    /// Thread-safety: call from the benchmark registration closure only.
    public static func timerChurn(_ peer: String, make: @escaping @Sendable () throws -> any TimerChurnPeer) {
        let box = FixtureBox<any TimerChurnPeer>()
        Benchmark(
            "TimerChurn.\(peer)",
            configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal, BenchMetrics.contextSwitches,
                                           BenchMetrics.operations],
                                 warmupIterations: 1, scalingFactor: .kilo, maxDuration: .seconds(5), maxIterations: 10),
            closure: { benchmark in
                let fixture = box.fixture!
                let switches = ProcessCounters.contextSwitches()
                benchmark.startMeasurement()
                let timers = fixture.runSample(turns: timerChurnTurns, timersPerTurn: timersPerTurn)
                benchmark.stopMeasurement()
                precondition(timers == timerChurnTurns * timersPerTurn, "\(benchmark.name): \(timers) timers handled")
                record(benchmark, operations: timers, contextSwitches: ProcessCounters.contextSwitches() - switches,
                       wakeSignals: nil)
            },
            setup: { box.fixture = try make() },
            teardown: { box.fixture?.shutDown(); box.fixture = nil }
        )
    }
}
