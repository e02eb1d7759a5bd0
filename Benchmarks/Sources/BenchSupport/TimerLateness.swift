import Benchmark
import PeerSupport

/// One peer of the timer lateness: how late a one-shot timer a little under a millisecond ahead
/// runs on an otherwise idle loop thread, the wait a server's short timeouts and rate limiters rely
/// on.
///
/// Thread-safety: `Sendable`; ``lateness(afterNanoseconds:)`` and ``shutDown()`` from the driving
/// thread, one at a time.
public protocol TimerLatenessPeer: AnyObject, Sendable {
    /// Schedules one timer `delay` nanoseconds ahead on the peer's loop thread, waits until it ran,
    /// and returns how many nanoseconds after its due time its handler started.
    ///
    /// Thread-safety: the driving thread; blocks until the timer ran.
    func lateness(afterNanoseconds delay: Int64) -> Int64
    /// Ends the loop thread.
    ///
    /// Thread-safety: the driving thread, once.
    func shutDown()
}

extension Scenarios {
    /// How far ahead each timer is set: 300 µs, below libevent's millisecond waits.
    ///
    /// Thread-safety: a constant.
    public static let timerLatenessDelayNanoseconds: Int64 = 300_000

    /// Registers `TimerLateness.<peer>`: one timer per sample, ``timerLatenessDelayNanoseconds``
    /// ahead; reports its lateness as `latencyNs`, and wall clock, context switches and
    /// `operations` (1).
    ///
    /// Thread-safety: call from the benchmark registration closure only.
    public static func timerLateness(_ peer: String, make: @escaping @Sendable () throws -> any TimerLatenessPeer) {
        let box = FixtureBox<any TimerLatenessPeer>()
        Benchmark(
            "TimerLateness.\(peer)",
            configuration: .init(metrics: [.wallClock, .throughput, BenchMetrics.latencyNs, BenchMetrics.contextSwitches,
                                           BenchMetrics.operations],
                                 warmupIterations: 3, scalingFactor: .one, maxDuration: .seconds(5), maxIterations: 200),
            closure: { benchmark in
                let switches = ProcessCounters.contextSwitches()
                benchmark.startMeasurement()
                let late = box.fixture!.lateness(afterNanoseconds: timerLatenessDelayNanoseconds)
                benchmark.stopMeasurement()
                precondition(late >= 0, "\(benchmark.name): the timer ran \(-late) ns before its due time")
                benchmark.measurement(BenchMetrics.latencyNs, Int(late))
                record(benchmark, operations: 1, contextSwitches: ProcessCounters.contextSwitches() - switches,
                       wakeSignals: nil)
            },
            setup: { box.fixture = try make() },
            teardown: { box.fixture?.shutDown(); box.fixture = nil }
        )
    }
}
