import Foundation
import PortRunLoopKit

/// The run-loop observers and custom sources of a model-test case: their models, and what each run
/// of the case owes them. The checks (``ModelHarness`` executes the operations; the extension below
/// checks the callouts):
///
/// - O1/O2/O3/O5: every run of the case polls, so a run of a non-empty mode reports, at its level,
///   exactly `entry`, `beforeTimers`, `beforeSources` (before it handles anything) and `exit` (after
///   everything, nested runs included) — never `beforeWaiting`/`afterWaiting` — and a run of an
///   empty mode reports nothing. (Work the case queued on the loop counts until the loop collects
///   it, R2, which the model does not follow: a run of a mode the model finds empty may report
///   either nothing or all four rounds, and handles nothing.) Each round calls exactly the observers registered in the run's
///   mode (`.common` expanded) for that activity, in (order, time added) order; a one-shot once.
/// - O6: nested runs report their own rounds, in their own mode, inside the handler that runs them.
/// - V1: `schedule` for each mode a source joins (`.common` once, as given), `cancel` for each it
///   leaves; `contains` answers as the model does.
/// - V2/R2/R3: a source keeps its modes from being empty, and its perform ends a run that returns
///   after a handled source (timers do not).
/// - V4/V5: a pass performs every source signalled in its mode once, in (order, latest signal)
///   order — only the first in a run that returns after a handled source — and never a source
///   that is not signalled, not in the run's mode, removed or invalidated; a polling run performs
///   every source that was signalled in its mode when it began.
///
/// Thread-safety: part of ``ModelHarness``: the loop's thread only.
struct ModelCallouts {
    struct ObserverModel {
        let activities: RunLoopActivity
        let repeats: Bool
        let order: Int
        var modes: Set<ModelMode> = []
        var valid = true
        /// When it was last added to a first mode: the tie between equal orders (O3).
        var sequence = 0
        var registered: Bool { valid && !modes.isEmpty }
    }

    struct SourceModel {
        let order: Int
        var modes: Set<ModelMode> = []
        var valid = true
        var signalled = false
        /// When it was last signalled: the tie between equal orders (V5).
        var signalSequence = 0
        var performs = 0
        var removals = 0
    }

    /// One run in progress, as far as its observers and sources go.
    struct Frame {
        let mode: ModelMode
        let wasEmpty: Bool
        /// A run that returns after a handled source performs only the first signalled source.
        let stopAfterFirst: Bool
        /// The entry, beforeTimers and beforeSources rounds, worked out when the run began (as if its
        /// mode were not empty: see the type's comment).
        let startExpected: [(observer: Int, activity: RunLoopActivity)]
        var startCalls: [(observer: Int, activity: RunLoopActivity)] = []
        /// The exit round, worked out when it began (its first call) or when the run returned.
        var exitExpected: [Int]?
        var exitCalls: [Int] = []
        /// Something was handled at this level (the start rounds are over).
        var handling = false
        /// The performs of one pass: what it owes, how many came, the event serial of the last.
        var batchExpected: [Int] = []
        var batchDone = 0
        var batchSerial: Int?
        let readySources: [Int]
        let performsAtStart: [Int]
        let removalsAtStart: [Int]
    }

    var observers: [RunLoopObserver] = []
    var observerModels: [ObserverModel] = []
    var nextObserverSequence = 0
    var sources: [RunLoopSource] = []
    var sourceModels: [SourceModel] = []
    var nextSignal = 0
    var frames: [Frame] = []
    /// Moves at every call the loop makes into the case: consecutive performs have consecutive
    /// serials.
    var serial = 0
    /// `schedule` ("+mode") and `cancel` ("-mode") calls since the operation began.
    var callbacks: [String] = []

    static func name(_ mode: RunLoop.Mode) -> String {
        ModelMode.allCases.first { $0.mode == mode }?.description ?? mode.rawValue
    }

    static func describe(_ calls: [(observer: Int, activity: RunLoopActivity)]) -> String {
        "[" + calls.map { "o\($0.observer):\(ModelOp.letters($0.activity))" }.joined(separator: " ") + "]"
    }
}

extension ModelHarness {
    /// Makes the case's custom sources (added to the loop only by `addSource`).
    func setUpCallouts() {
        for (index, order) in ModelGenerator.sourceOrders.enumerated() {
            let source = RunLoopSource(order: order,
                                       schedule: { [unowned self] _, mode in self.callouts.callbacks.append("+\(ModelCallouts.name(mode))") },
                                       cancel: { [unowned self] _, mode in self.callouts.callbacks.append("-\(ModelCallouts.name(mode))") },
                                       perform: { [unowned self] _ in self.sourcePerformed(index) })
            callouts.sources.append(source)
            callouts.sourceModels.append(ModelCallouts.SourceModel(order: order))
        }
    }

    /// The observers `activity`'s round calls in a run of `mode`, in order, as `models` stand.
    func expectedRound(_ activity: RunLoopActivity, mode: ModelMode, _ models: [ModelCallouts.ObserverModel]) -> [Int] {
        models.indices.filter { models[$0].registered && inMode(models[$0].modes, mode) && models[$0].activities.contains(activity) }
            .sorted { (models[$0].order, models[$0].sequence) < (models[$1].order, models[$1].sequence) }
    }

    /// Whether a valid source keeps `mode` from being empty (V2).
    func sourceKeepsModeAlive(_ mode: ModelMode) -> Bool {
        callouts.sourceModels.contains { $0.valid && inMode($0.modes, mode) }
    }

    /// The sources signalled in `mode`, in the order a pass performs them (V5).
    func signalledSources(in mode: ModelMode) -> [Int] {
        let models = callouts.sourceModels
        return models.indices.filter { models[$0].valid && models[$0].signalled && inMode(models[$0].modes, mode) }
            .sorted { (models[$0].order, models[$0].signalSequence) < (models[$1].order, models[$1].signalSequence) }
    }

    // MARK: - Runs

    func calloutRunStarting(mode: ModelMode, wasEmpty: Bool, stopAfterFirst: Bool) {
        var simulated = callouts.observerModels
        var start: [(observer: Int, activity: RunLoopActivity)] = []
        for activity in [RunLoopActivity.entry, .beforeTimers, .beforeSources] {
            for index in expectedRound(activity, mode: mode, simulated) {
                start.append((index, activity))
                if !simulated[index].repeats { simulated[index].valid = false }
            }
        }
        let sources = callouts.sourceModels
        callouts.frames.append(ModelCallouts.Frame(mode: mode, wasEmpty: wasEmpty, stopAfterFirst: stopAfterFirst, startExpected: start,
                                                   readySources: signalledSources(in: mode), performsAtStart: sources.map(\.performs),
                                                   removalsAtStart: sources.map(\.removals)))
    }

    func calloutRunEnded(label: String, completes: Bool) {
        closeBatch()
        let frame = callouts.frames.removeLast()
        // A run of a mode the model finds empty reports nothing, unless the loop entered it for
        // work it had not collected yet (then like any other).
        let entered = !frame.wasEmpty || !frame.startCalls.isEmpty || !frame.exitCalls.isEmpty
        let startExpected = entered ? frame.startExpected : []
        if frame.startCalls.map(\.observer) != startExpected.map(\.observer)
            || frame.startCalls.map(\.activity) != startExpected.map(\.activity) {
            violation("\(label): observers reported \(ModelCallouts.describe(frame.startCalls)) before handling, expected "
                + "\(ModelCallouts.describe(startExpected)) (O2/O3/O5)")
        }
        let exitExpected = frame.exitExpected ?? (entered ? expectedRound(.exit, mode: frame.mode, callouts.observerModels) : [])
        if frame.exitCalls != exitExpected {
            violation("\(label): observers reported exit as \(frame.exitCalls.map { "o\($0)" }), expected \(exitExpected.map { "o\($0)" }) (O3/O5)")
        }
        guard completes else { return }
        for s in frame.readySources {
            let model = callouts.sourceModels[s]
            guard model.valid, inMode(model.modes, frame.mode), model.removals == frame.removalsAtStart[s] else { continue }
            if model.performs == frame.performsAtStart[s] {
                violation("\(label): s\(s), signalled in this mode before the run, did not perform (V4/R4)")
            }
        }
    }

    // MARK: - Events (called by the loop, on this thread)

    /// Any other call the loop makes into the case: it ends a pass's performs and the start rounds.
    func calloutEvent() {
        callouts.serial += 1
        closeBatch()
        if !callouts.frames.isEmpty { callouts.frames[callouts.frames.count - 1].handling = true }
    }

    private func closeBatch() {
        guard let f = callouts.frames.indices.last, callouts.frames[f].batchSerial != nil else { return }
        let frame = callouts.frames[f]
        if frame.batchDone < frame.batchExpected.count {
            violation("signalled source(s) \(frame.batchExpected[frame.batchDone...].map { "s\($0)" }) of the pass in \(frame.mode) "
                + "did not perform with the others (V4/V5)")
        }
        callouts.frames[f].batchSerial = nil
        callouts.frames[f].batchExpected = []
        callouts.frames[f].batchDone = 0
    }

    func observerCalled(_ index: Int, _ activity: RunLoopActivity) {
        callouts.serial += 1
        trace.append("\(depth)→ observer o\(index) \(ModelOp.letters(activity))")
        guard let mode = checkMode("observer o\(index)") else { return }
        closeBatch()
        let model = callouts.observerModels[index]
        if !model.valid {
            violation("o\(index) called after it was invalidated (or after its one call) (O1/O4)")
        } else if !inMode(model.modes, mode) {
            violation("o\(index) called in a run of \(mode), not one of its modes \(model.modes.map(\.description).sorted()) (O1)")
        }
        if !model.activities.contains(activity) { violation("o\(index) called for \(ModelOp.letters(activity)), which it does not watch") }
        guard let f = callouts.frames.indices.last else { return }
        switch activity {
        case .entry, .beforeTimers, .beforeSources:
            if callouts.frames[f].handling {
                violation("o\(index) called for \(ModelOp.letters(activity)) after the run began handling (a polling run reports it once, first: O5)")
            }
            callouts.frames[f].startCalls.append((index, activity))
        case .exit:
            if callouts.frames[f].exitExpected == nil {
                callouts.frames[f].exitExpected = expectedRound(.exit, mode: mode, callouts.observerModels)
            }
            callouts.frames[f].exitCalls.append(index)
        default:
            violation("o\(index) called for \(ModelOp.letters(activity)) in a polling run (O5: only a run that waits reports it)")
        }
        if !model.repeats {
            callouts.observerModels[index].valid = false
            callouts.observerModels[index].modes = []
        }
    }

    func sourcePerformed(_ index: Int) {
        let continuing = callouts.frames.last?.batchSerial == callouts.serial
        callouts.serial += 1
        trace.append("\(depth)→ s\(index) performed")
        guard let mode = checkMode("perform of s\(index)") else { return }
        noteHandledSource()
        guard let f = callouts.frames.indices.last else { return }
        if !continuing {
            closeBatch()
            let due = signalledSources(in: mode)
            callouts.frames[f].batchExpected = callouts.frames[f].stopAfterFirst ? Array(due.prefix(1)) : due
        }
        callouts.frames[f].handling = true
        let model = callouts.sourceModels[index]
        if !model.valid { violation("s\(index) performed after invalidate() returned (V6)") }
        if !inMode(model.modes, mode) { violation("s\(index) performed in a run of \(mode), not one of its modes (V2/R1)") }
        if !model.signalled { violation("s\(index) performed without a signal since its last perform (V4)") }
        let frame = callouts.frames[f]
        if frame.batchDone >= frame.batchExpected.count || frame.batchExpected[frame.batchDone] != index {
            violation("s\(index) performed where the pass owed \(frame.batchExpected[min(frame.batchDone, frame.batchExpected.count)...].map { "s\($0)" }) "
                + "(V4/V5: each signalled source once, in (order, latest signal) order; one in a run returning after a source)")
        }
        callouts.frames[f].batchDone += 1
        callouts.frames[f].batchSerial = callouts.serial
        callouts.sourceModels[index].signalled = false
        callouts.sourceModels[index].performs += 1
    }
}
