import Foundation

/// What one turn of a ``PortRunLoop`` did: handed to its ``LoopMetricsDelegate`` after the turn.
///
/// A turn is one pass of a run: the loop handles what is ready (queued blocks and calls, executor
/// jobs, port messages, due timers, ready fds, in that order) and is reported as soon as it is done,
/// before the loop waits for what comes next; ``sleepTime`` is the wait that came before the turn
/// (as in SwiftNIO's per-tick metrics), so `endTime - startTime` is the time the loop was busy. A
/// handler that runs the loop nested makes turns of its own, reported first (with a higher
/// ``nestingLevel``); the counts of the enclosing turn include theirs, so summing the turns of
/// level 0 counts everything once.
///
/// Thread-safety: a value type; `Sendable`.
public struct LoopTurnInfo: Sendable, Equatable {
    /// The mode the turn ran in.
    ///
    /// Thread-safety: a value type.
    public var mode: RunLoop.Mode
    /// 0 for a turn of the outermost run, 1 for a run nested in one of its handlers, and so on.
    ///
    /// Thread-safety: a value type.
    public var nestingLevel: Int
    /// When the turn started.
    ///
    /// Thread-safety: a value type.
    public var startTime: ContinuousClock.Instant
    /// When the turn's handling ended (before the loop waits again).
    ///
    /// Thread-safety: a value type.
    public var endTime: ContinuousClock.Instant
    /// How long the loop waited for something to happen just before this turn (a short spin for a
    /// burst in progress, then blocked in the kernel); zero when the turn followed another at once
    /// or began the run.
    ///
    /// Thread-safety: a value type.
    public var sleepTime: Duration
    /// `perform` blocks and synchronous-call bodies (`performAndWait`, `submit`) run, and the
    /// library's own queued work (a notification lane's drain counts as one).
    ///
    /// Thread-safety: a value type.
    public var blocksRun: Int
    /// Executor jobs run (actor and task-executor jobs).
    ///
    /// Thread-safety: a value type.
    public var executorJobsRun: Int
    /// ``MessagePort`` messages handed to a handler or delegate.
    ///
    /// Thread-safety: a value type.
    public var messagesDelivered: Int
    /// Timer fires.
    ///
    /// Thread-safety: a value type.
    public var timersFired: Int
    /// Fd-source handler calls.
    ///
    /// Thread-safety: a value type.
    public var fdEventsHandled: Int

    /// Makes an info from explicit values (for tests and for delegates that aggregate).
    ///
    /// Thread-safety: a value type.
    public init(mode: RunLoop.Mode, nestingLevel: Int = 0, startTime: ContinuousClock.Instant,
                endTime: ContinuousClock.Instant, sleepTime: Duration = .zero, blocksRun: Int = 0,
                executorJobsRun: Int = 0, messagesDelivered: Int = 0, timersFired: Int = 0,
                fdEventsHandled: Int = 0) {
        self.mode = mode
        self.nestingLevel = nestingLevel
        self.startTime = startTime
        self.endTime = endTime
        self.sleepTime = sleepTime
        self.blocksRun = blocksRun
        self.executorJobsRun = executorJobsRun
        self.messagesDelivered = messagesDelivered
        self.timersFired = timersFired
        self.fdEventsHandled = fdEventsHandled
    }

    /// Everything the turn handled: blocks, jobs, messages, timer fires and fd events.
    ///
    /// Thread-safety: a value type.
    public var itemsHandled: Int {
        blocksRun + executorJobsRun + messagesDelivered + timersFired + fdEventsHandled
    }
}

/// Told about every turn of a ``PortRunLoop`` (``PortRunLoop/metricsDelegate``): the per-turn
/// counterpart of polling ``PortRunLoop/metrics``, with no dependency (a swift-metrics or tracing
/// adapter builds on it).
///
/// The delegate is called on the loop's thread, after each turn, synchronously: keep it short (a few
/// additions, or a hand-off to another thread). It may use the loop (`perform`, add sources); a
/// nested run from it is not reported (the loop does not report turns while it reports one).
///
/// Thread-safety: `Sendable` (set from any thread, called on the loop's thread).
public protocol LoopMetricsDelegate: AnyObject, Sendable {
    /// Called after each turn of `loop` with what the turn did.
    ///
    /// Thread-safety: called on `loop`'s thread only.
    func processedTurn(of loop: PortRunLoop, info: LoopTurnInfo)
}

/// The start of a turn reported to a ``LoopMetricsDelegate``: the time and the counters then.
///
/// Thread-safety: a value type, made and used on the loop's thread.
struct TurnStart {
    /// ``System/monotonicSeconds()`` at the start. Not a `ContinuousClock.Instant`: the standard
    /// library's clock types are resilient, so keeping one here (or an optional `TurnStart`) in
    /// the run's locals costs value-witness calls on every turn, reported or not; the instant is
    /// made only when a turn is reported.
    let startedAt: Double
    /// The wait before the turn, in seconds.
    let sleptBefore: Double
    let performs: Int
    let jobs: Int
    let messages: Int
    let timers: Int
    let fds: Int

    init(of loop: PortRunLoop, sleptBefore: Double) {
        startedAt = System.monotonicSeconds()
        self.sleptBefore = sleptBefore
        performs = loop.performsRun.value
        jobs = loop.executorJobsRun.value
        messages = loop.messagesDelivered.value
        timers = loop.timersFired.value
        fds = loop.fdEventsHandled.value
    }
}

extension PortRunLoop {
    /// Told about every turn of this loop, on the loop's thread (see ``LoopMetricsDelegate``); nil
    /// (the default) reports nothing and costs nothing per turn but one load. Held strongly. A
    /// change made from another thread takes effect at the loop's next turn (a sleeping loop is
    /// woken for it).
    ///
    /// Thread-safety: any thread.
    public var metricsDelegate: (any LoopMetricsDelegate)? {
        get { inbox.withLock { $0.metricsDelegate } }
        set {
            if isCurrentThread { ownerMetricsDelegate = newValue }
            let ring = inbox.withLock { inbox -> Bool in
                inbox.metricsDelegate = newValue
                inbox.metricsDelegateChanged = true
                return workArrivedLocked(&inbox)
            }
            if ring { ringDoorbell() }
        }
    }

    /// Loop thread, at the end of a turn that began at `start`: tells the delegate. Turns of a run
    /// made by the delegate itself are not reported.
    func reportTurn(from start: TurnStart, mode: RunLoop.Mode) {
        guard let delegate = ownerMetricsDelegate, !isReportingTurn else { return }
        let jobs = executorJobsRun.value - start.jobs
        let endTime = ContinuousClock.now
        let startTime = endTime - .seconds(max(0, System.monotonicSeconds() - start.startedAt))
        let info = LoopTurnInfo(
            mode: mode, nestingLevel: frames.count - 1, startTime: startTime, endTime: endTime,
            sleepTime: .nanoseconds(Int64((start.sleptBefore * 1e9).rounded())),
            blocksRun: performsRun.value - start.performs - jobs, executorJobsRun: jobs,
            messagesDelivered: messagesDelivered.value - start.messages,
            timersFired: timersFired.value - start.timers, fdEventsHandled: fdEventsHandled.value - start.fds)
        isReportingTurn = true
        defer { isReportingTurn = false }
        delegate.processedTurn(of: self, info: info)
    }
}
