import Benchmark
import PortRunLoopKit
import Synchronization

/// What observers cost a turn, counted: a thread that owns a loop with `observers` observers of
/// every activity (in its common modes; none at all for 0) takes ``ObserverRoundsFixture/turns``
/// turns per sample. Each turn is a round trip: the benchmark thread queues a block with `perform`,
/// the loop's thread runs `run(mode:before:)` with a past date once (the Foundation idiom's turn:
/// it handles the block and returns), then answers. Reports the rounds of observer calls the loop
/// made (``BenchMetrics/observerRounds``, from `LoopMetrics.observerRounds`): none without
/// observers (Semantics.md O7), and with them exactly four per turn — entry, before timers, before
/// sources, exit, the sequence CFRunLoop reports for a run that handles a source in its first
/// pass (O5) — however many observers there are.
///
/// Thread-safety: `Sendable`; driven from the benchmark thread.
public final class ObserverRoundsFixture: @unchecked Sendable {
    /// Turns per sample: few enough that the rounds of a sample (4 per turn) stay below 2,048, which
    /// the benchmark's histograms, and so the exported samples, hold exactly (3 significant digits:
    /// 4,000 would be exported as 4,001).
    public static let turns = 500

    private final class Control: Sendable {
        let go = Completion()
        let done = Completion()
        let quit = Atomic<Bool>(false)
    }

    private let control = Control()
    private let thread: BenchThread
    private let loop: PortRunLoop

    /// Starts the loop's thread with its observers.
    ///
    /// Thread-safety: any thread.
    public init(observers: Int) {
        let control = self.control
        let ready = Completion()
        let made = Mutex<PortRunLoop?>(nil)
        thread = BenchThread {
            let loop = PortRunLoop.current
            let port = MessagePort() // keeps the default mode from being empty
            loop.add(port, forMode: .default)
            let all: RunLoopActivity = [.entry, .beforeTimers, .beforeSources, .beforeWaiting, .afterWaiting, .exit]
            let added = (0..<observers).map { order in RunLoopObserver(activities: all, order: order) { _, _ in } }
            for observer in added { loop.add(observer, forMode: .common) }
            made.withLock { $0 = loop }
            ready.signal()
            while true {
                control.go.wait()
                if control.quit.load(ordering: .acquiring) { break }
                loop.run(mode: .default, before: .distantPast)
                control.done.signal()
            }
            for observer in added { observer.invalidate() }
            port.invalidate()
        }
        ready.wait()
        loop = made.withLock { $0! }
    }

    func runSample(_ benchmark: Benchmark) {
        let before = loop.metrics.observerRounds
        benchmark.startMeasurement()
        for _ in 0..<Self.turns {
            loop.perform {}
            control.go.signal()
            control.done.wait()
        }
        benchmark.stopMeasurement()
        benchmark.measurement(BenchMetrics.operations, Self.turns)
        benchmark.measurement(BenchMetrics.observerRounds, loop.metrics.observerRounds - before)
    }

    func shutDown() {
        control.quit.store(true, ordering: .releasing)
        control.go.signal()
        thread.join()
    }
}

extension Scenarios {
    /// `ObserverRounds.<peer>`: ``ObserverRoundsFixture`` with `observers` observers.
    public static func observerRounds(_ peer: String, observers: Int, maxIterations: Int = 100) {
        let box = FixtureBox<ObserverRoundsFixture>()
        Benchmark(
            "ObserverRounds.\(peer)",
            configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal, BenchMetrics.operations, BenchMetrics.observerRounds],
                                 warmupIterations: 2, scalingFactor: .kilo,
                                 maxDuration: .seconds(2), maxIterations: maxIterations),
            closure: { benchmark in box.fixture!.runSample(benchmark) },
            setup: { box.fixture = ObserverRoundsFixture(observers: observers) },
            teardown: { box.fixture?.shutDown(); box.fixture = nil }
        )
    }
}
