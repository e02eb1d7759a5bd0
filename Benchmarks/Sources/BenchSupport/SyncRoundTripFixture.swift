import Benchmark
import PeerSupport
import Synchronization

/// A blocking call from a plain thread (no run loop) onto a consumer thread, ``Scenarios/roundTrips``
/// per sample: our `performAndWait`, NIO's `submit(_:).wait()`, `DispatchQueue.sync`.
///
/// Thread-safety: `Sendable`; driven from the benchmark thread.
public final class SyncRoundTripFixture: @unchecked Sendable {
    private final class Control: Sendable {
        let go = Completion()
        let done = Completion()
        let quit = Atomic<Bool>(false)
    }

    private let control = Control()
    private let callerThread: BenchThread
    private let tearDown: @Sendable () -> Void

    /// `call` makes one blocking round trip; `tearDown` releases the consumer.
    public init(calls: Int, call: @escaping @Sendable () -> Void, tearDown: @escaping @Sendable () -> Void) {
        self.tearDown = tearDown
        callerThread = BenchThread { [control] in
            while true {
                control.go.wait()
                if control.quit.load(ordering: .acquiring) { return }
                for _ in 0..<calls { call() }
                control.done.signal()
            }
        }
    }

    func runSample(_ benchmark: Benchmark, calls: Int) {
        let switches = ProcessCounters.contextSwitches()
        benchmark.startMeasurement()
        control.go.signal()
        control.done.wait()
        benchmark.stopMeasurement()
        record(benchmark, operations: calls, contextSwitches: ProcessCounters.contextSwitches() - switches, wakeSignals: nil)
    }

    func shutDown() {
        control.quit.store(true, ordering: .releasing)
        control.go.signal()
        callerThread.join()
        tearDown()
    }
}

extension Scenarios {
    /// Blocking round trips from a thread without a run loop (see ``SyncRoundTripFixture``).
    public static func syncRoundTrip(_ peer: String, maxIterations: Int = 200,
                                     make: @escaping @Sendable () throws -> SyncRoundTripFixture) {
        let box = FixtureBox<SyncRoundTripFixture>()
        Benchmark(
            "SyncRoundTrip.\(peer)",
            configuration: .init(metrics: BenchMetrics.standard, warmupIterations: 3, scalingFactor: .kilo,
                                 maxDuration: .seconds(2), maxIterations: maxIterations),
            closure: { benchmark in box.fixture!.runSample(benchmark, calls: roundTrips) },
            setup: { box.fixture = try make() },
            teardown: { box.fixture?.shutDown(); box.fixture = nil }
        )
    }

    /// A CPU-only loop of `body` on the benchmark's thread, 1000 per sample (same-thread posts).
    public static func inline(_ name: String, body: @escaping () -> Void) {
        Benchmark(
            name,
            configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal, BenchMetrics.operations],
                                 warmupIterations: 3, scalingFactor: .kilo, maxDuration: .seconds(2), maxIterations: 1000),
            closure: { benchmark in
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations { body() }
                benchmark.stopMeasurement()
                benchmark.measurement(BenchMetrics.operations, benchmark.scaledIterations.count)
            }
        )
    }
}
