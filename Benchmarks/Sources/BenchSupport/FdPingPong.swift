import Benchmark
import PeerSupport

/// What a loop carries beside the fd ping-pong: nothing, idle fd sources, or idle timers.
///
/// Thread-safety: a value type; `Sendable`.
public enum IdleLoad: Sendable {
    /// Only the two ends of the ping-pong.
    case none
    /// This many more fd sources, on descriptors that never become readable (see
    /// ``IdleDescriptors``: fewer when the descriptor limit does not allow that many).
    case fileDescriptors(Int)
    /// This many armed timers an hour away, in the loop's common modes.
    case timers(Int)

    /// The scenario part of the benchmark name: `FdPingPong`, `FdPingPong.Idle10k`, `Timers.Idle10k`.
    ///
    /// Thread-safety: any thread.
    public var scenarioName: String {
        switch self {
        case .none: "FdPingPong"
        case .fileDescriptors(let count): "FdPingPong.Idle\(Self.label(count))"
        case .timers(let count): "Timers.Idle\(Self.label(count))"
        }
    }

    /// `0`, `1k`, `10k`, `100k`: counts as they appear in names.
    ///
    /// Thread-safety: any thread.
    public static func label(_ count: Int) -> String {
        count >= 1000 && count % 1000 == 0 ? "\(count / 1000)k" : "\(count)"
    }
}

/// One peer of the fd ping-pong: ONE thread, a non-blocking AF_UNIX socketpair, both ends watched
/// for reading. A sample writes one byte to one end; whichever end becomes readable, its handler
/// reads the byte and writes it back, which makes the other end readable. Each handled read is one
/// event; a sample ends after ``Scenarios/fdPingPongEvents`` events or at its time cap, and the last
/// event writes nothing back.
///
/// Thread-safety: `Sendable`; ``runSample(events:deadline:)`` and ``shutDown()`` from the driving
/// thread, one at a time.
public protocol FdPingPongPeer: AnyObject, Sendable {
    /// Idle sources actually registered (fds or timers; 0 without an ``IdleLoad``).
    ///
    /// Thread-safety: any thread.
    var idleSources: Int { get }
    /// Runs one sample on the peer's loop thread and returns the events handled: `events`, or fewer
    /// when `CLOCK_MONOTONIC` passed `deadline` (ns, see ``ProcessCounters/nanoseconds()``; checked
    /// every 64 events).
    ///
    /// Thread-safety: the driving thread; blocks until the sample ended.
    func runSample(events: Int, deadline: UInt64) -> Int
    /// Cancels every source, ends the loop thread and closes the descriptors the peer made.
    ///
    /// Thread-safety: the driving thread, once.
    func shutDown()
}

extension Scenarios {
    /// Events per fd ping-pong sample (100k).
    ///
    /// Thread-safety: a constant.
    public static let fdPingPongEvents = 100_000
    /// Wall-clock cap of one sample of the single-threaded scenarios: a sample that reaches it ends
    /// early and reports the events it handled as `operations`. Under 2 s, so that
    /// package-benchmark still records a throughput for the sample.
    ///
    /// Thread-safety: a constant.
    public static let sampleCap: Duration = .milliseconds(1500)

    /// Registers `<scenario>.<peer>` (see ``IdleLoad/scenarioName``): ``fdPingPongEvents`` events per
    /// sample, at most ``sampleCap`` each. Reports wall clock, throughput, mallocs, context switches,
    /// `operations` (events handled) and, with an idle load, `idleSources`.
    ///
    /// Thread-safety: call from the benchmark registration closure only.
    public static func fdPingPong(_ peer: String, idle: IdleLoad = .none, maxDuration: Duration = .seconds(3),
                                  maxIterations: Int = 30,
                                  make: @escaping @Sendable (IdleLoad) throws -> any FdPingPongPeer) {
        let box = FixtureBox<any FdPingPongPeer>()
        var metrics: [BenchmarkMetric] = [.wallClock, .throughput, .mallocCountTotal, BenchMetrics.contextSwitches,
                                          BenchMetrics.operations]
        let reportsIdle: Bool
        if case .none = idle { reportsIdle = false } else { reportsIdle = true }
        if reportsIdle { metrics.append(BenchMetrics.idleSources) }
        Benchmark(
            "\(idle.scenarioName).\(peer)",
            configuration: .init(metrics: metrics, warmupIterations: 1, scalingFactor: .kilo,
                                 maxDuration: maxDuration, maxIterations: maxIterations),
            closure: { benchmark in
                let fixture = box.fixture!
                let switches = ProcessCounters.contextSwitches()
                let deadline = ProcessCounters.deadline(after: sampleCap)
                benchmark.startMeasurement()
                let handled = fixture.runSample(events: fdPingPongEvents, deadline: deadline)
                benchmark.stopMeasurement()
                precondition(handled > 0, "\(benchmark.name): the sample handled no event")
                record(benchmark, operations: handled, contextSwitches: ProcessCounters.contextSwitches() - switches,
                       wakeSignals: nil)
                if reportsIdle { benchmark.measurement(BenchMetrics.idleSources, fixture.idleSources) }
            },
            setup: { box.fixture = try make(idle) },
            teardown: { box.fixture?.shutDown(); box.fixture = nil }
        )
    }
}
