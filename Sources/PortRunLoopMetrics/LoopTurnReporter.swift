import CoreMetrics
import PortRunLoopKit

/// A `LoopMetricsDelegate` that reports every turn of a loop to swift-metrics:
/// timers ``LoopMetricNames/turnBusy`` and ``LoopMetricNames/turnSleep``, and counters
/// ``LoopMetricNames/turns`` and ``LoopMetricNames/turnItems`` (by kind: `blocks`, `jobs`,
/// `messages`, `timers`, `fds`), all with the dimension `("loop", name)`.
///
/// Install it with `loop.metricsDelegate = LoopTurnReporter(loop: loop)`. The metric objects are
/// made once, at init; a turn costs two timer records and at most six counter increments, with no
/// string built and nothing allocated by the reporter. Only turns of the outermost run
/// (`LoopTurnInfo.nestingLevel` 0) are reported: a nested run's turns are part of
/// the enclosing turn, whose counts and busy time include theirs, so nothing is counted twice.
///
/// Thread-safety: `Sendable` (its state is immutable metric handles); the loop calls it on its own
/// thread.
public final class LoopTurnReporter: LoopMetricsDelegate {
    private let busy: CoreMetrics.Timer
    private let sleep: CoreMetrics.Timer
    private let turns: Counter
    private let blocks: Counter
    private let jobs: Counter
    private let messages: Counter
    private let timers: Counter
    private let fds: Counter

    /// A reporter whose metrics carry `("loop", loopName)` followed by `dimensions`, made by `factory`.
    ///
    /// - Parameters:
    ///   - loopName: the value of the `loop` dimension.
    ///   - dimensions: extra dimensions for every metric.
    ///   - factory: the metrics backend (default: the bootstrapped `MetricsSystem.factory`).
    ///
    /// Thread-safety: any thread.
    public init(loopName: String, dimensions: [(String, String)] = [],
                factory: any MetricsFactory = MetricsSystem.factory) {
        let base = [(LoopMetricNames.loopKey, loopName)] + dimensions
        func items(_ kind: String) -> Counter {
            Counter(label: LoopMetricNames.turnItems, dimensions: base + [(LoopMetricNames.kindKey, kind)],
                    factory: factory)
        }
        busy = CoreMetrics.Timer(label: LoopMetricNames.turnBusy, dimensions: base, factory: factory)
        sleep = CoreMetrics.Timer(label: LoopMetricNames.turnSleep, dimensions: base, factory: factory)
        turns = Counter(label: LoopMetricNames.turns, dimensions: base, factory: factory)
        blocks = items("blocks")
        jobs = items("jobs")
        messages = items("messages")
        timers = items("timers")
        fds = items("fds")
    }

    /// A reporter for `loop`, labelled with its `PortRunLoop.name`; see
    /// ``init(loopName:dimensions:factory:)``. It does not install itself: set
    /// `loop.metricsDelegate` to it.
    ///
    /// Thread-safety: any thread.
    public convenience init(loop: PortRunLoop, dimensions: [(String, String)] = [],
                            factory: any MetricsFactory = MetricsSystem.factory) {
        self.init(loopName: loop.name, dimensions: dimensions, factory: factory)
    }

    /// Records one turn: its busy and sleep times, and what it handled. Turns of nested runs are
    /// ignored (their enclosing turn includes them).
    ///
    /// Thread-safety: called by the loop on its thread; safe from any thread.
    public func processedTurn(of loop: PortRunLoop, info: LoopTurnInfo) {
        guard info.nestingLevel == 0 else { return }
        busy.recordNanoseconds(Self.nanoseconds(info.endTime - info.startTime))
        sleep.recordNanoseconds(Self.nanoseconds(info.sleepTime))
        turns.increment()
        Self.add(info.blocksRun, to: blocks)
        Self.add(info.executorJobsRun, to: jobs)
        Self.add(info.messagesDelivered, to: messages)
        Self.add(info.timersFired, to: timers)
        Self.add(info.fdEventsHandled, to: fds)
    }

    private static func add(_ count: Int, to counter: Counter) {
        if count > 0 { counter.increment(by: count) }
    }

    /// `duration` in whole nanoseconds, clamped to 0 ... Int64.max.
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .max }
        return whole.addingReportingOverflow(attoseconds / 1_000_000_000).overflow
            ? .max : whole + attoseconds / 1_000_000_000
    }
}
