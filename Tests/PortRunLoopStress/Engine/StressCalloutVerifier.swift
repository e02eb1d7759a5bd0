import Foundation
import PortRunLoopKit

/// Checks the observer and custom-source part of a finished round (every consumer shut down):
///
/// - observers: no call started after `invalidate()` returned or after a removal was applied
///   (``StressCancelMarker``); every call on the loop's thread, in a mode of the observer, for an
///   activity it watches, in CF's order (``StressRunTrace``) and in `order` within its round
///   (``StressCalloutLoop``); a one-shot called once (never twice; never zero times while armed on
///   a running loop); every run an observer of all activities saw begin also ended; every
///   observer not removed invalid once its loop shut down (L4);
/// - custom sources: no perform after `invalidate()` returned or a removal was applied; every
///   perform on the loop's thread, in a mode of the source, at most once per pass, while
///   scheduled; every signal followed by a perform that started after it (checked while running,
///   see ``StressCalloutChaos``); `schedule` and `cancel` paired per mode once the loop shut down;
///   every source not removed invalid then.
///
/// Thread-safety: used by one thread after every producer, chaos and consumer thread joined.
extension StressCallouts {
    func verify(into report: inout StressReport) {
        let (loops, observers, sources) = registry.withLock { (Array($0.loops.values), $0.observers, $0.sources) }
        report.callouts.observersInvalidated += observersInvalidated.load(ordering: .acquiring)
        report.callouts.observersInvalidatedWhileCalled += observersInvalidatedWhileCalled.load(ordering: .acquiring)
        report.callouts.observersRemoved += observersRemoved.load(ordering: .acquiring)
        report.callouts.sourcesInvalidated += sourcesInvalidated.load(ordering: .acquiring)
        report.callouts.sourcesInvalidatedWhileSignalled += sourcesInvalidatedWhileSignalled.load(ordering: .acquiring)
        report.callouts.sourcesRemoved += sourcesRemoved.load(ordering: .acquiring)
        report.callouts.signalsAwaited += signalsAwaited.load(ordering: .acquiring)
        report.callouts.signalWakeUps += wakeUps.load(ordering: .acquiring)
        for loop in loops {
            let state = loop.state.snapshot
            report.callouts.observerRounds += state.rounds
            report.countViolations(state.orderViolations, in: \.callouts.observersOutOfOrder,
                                   "observers: \(state.orderViolations) call(s) out of order: \(state.problems.joined(separator: "; "))")
        }
        for observer in observers { Self.verify(observer, into: &report) }
        for source in sources { Self.verify(source, into: &report) }
    }

    private static func verify(_ observer: StressObserver, into report: inout StressReport) {
        let state = observer.records.state.snapshot
        let label = observer.label
        report.callouts.observersAdded += 1
        if !observer.repeats { report.callouts.oneShotObservers += 1 }
        report.callouts.observerCalls += state.calls
        report.callouts.observersInFlightAtInvalidate += observer.records.marker.inFlightAtCancel.load(ordering: .acquiring)
        let after = observer.records.marker.startedAfterCancel.load(ordering: .acquiring)
        report.countViolations(after, in: \.callouts.observersAfterInvalidate,
                               "observers: \(label): \(after) call(s) started after invalidate() returned or after its removal was applied")
        let wrongThread = observer.records.wrongThread.load(ordering: .acquiring)
        report.countViolations(wrongThread, in: \.callouts.observersWrongThread,
                               "observers: \(label): \(wrongThread) call(s) on a thread other than its loop's")
        let wrongMode = observer.records.wrongMode.load(ordering: .acquiring)
        report.countViolations(wrongMode, in: \.callouts.observersWrongMode,
                               "observers: \(label): \(wrongMode) call(s) in a run of a mode it is not in")
        report.countViolations(state.traceViolations, in: \.callouts.observersOutOfSequence,
                               "observers: \(label): \(state.traceViolations) call(s) out of CF's sequence: \(state.problems.joined(separator: "; "))")
        if !observer.repeats && state.calls > 1 {
            report.callouts.oneShotsCalledTwice += 1
            report.violation("observers: \(label): a one-shot observer was called \(state.calls) times")
        }
        if state.neverCalledReported { report.callouts.oneShotsNeverCalled += 1 }
        let touched = state.invalidatedByEngine || state.removedByEngine
        if !state.removedByEngine && observer.observer.isValid {
            report.callouts.observersValidAfterShutDown += 1
            report.violation("observers: \(label) is still valid after its loop shut down (L4)")
        }
        if observer.repeats && observer.activities == .allActivities && !touched && !state.trace.isClosed {
            report.callouts.observerRunsNotExited += 1
            report.violation("observers: \(label): saw \(state.trace.stack.count) run(s) begin that never reported their exit "
                + "(\(state.trace.stack.map { "\($0.phase)" }.joined(separator: ", ")))")
        }
    }

    private static func verify(_ source: StressCustomSource, into report: inout StressReport) {
        let state = source.records.state.snapshot
        let label = source.label
        report.callouts.sourcesAdded += 1
        report.callouts.signals += state.signals
        report.callouts.performs += state.performs
        report.callouts.signalsMerged += state.merged
        report.callouts.sourcesInFlightAtInvalidate += source.records.marker.inFlightAtCancel.load(ordering: .acquiring)
        let after = source.records.marker.startedAfterCancel.load(ordering: .acquiring)
        report.countViolations(after, in: \.callouts.sourcesAfterInvalidate,
                               "sources: \(label): \(after) perform(s) started after invalidate() returned or after its removal was applied")
        let wrongThread = source.records.wrongThread.load(ordering: .acquiring)
        report.countViolations(wrongThread, in: \.callouts.sourcesWrongThread,
                               "sources: \(label): \(wrongThread) callback(s) on a thread other than its loop's")
        let wrongMode = source.records.wrongMode.load(ordering: .acquiring)
        report.countViolations(wrongMode, in: \.callouts.sourcesWrongMode,
                               "sources: \(label): \(wrongMode) perform(s) in a run of a mode it is not in")
        report.countViolations(state.twicePerPass, in: \.callouts.sourcesTwicePerPass,
                               "sources: \(label): performed twice in one pass \(state.twicePerPass) time(s) (V4)")
        if state.lostReported { report.callouts.lostSignals += 1 }
        let bookkeeping = state.problems.filter { !$0.hasPrefix("performed twice") }
        if state.schedules != state.cancels || !state.scheduled.isEmpty || !bookkeeping.isEmpty {
            report.callouts.sourceCallbacksUnpaired += 1
            report.violation("sources: \(label): schedule called \(state.schedules) times, cancel \(state.cancels) times after its loop "
                + "shut down (still scheduled: \(state.scheduled.map(\.rawValue).sorted()))\(bookkeeping.isEmpty ? "" : "; \(bookkeeping.joined(separator: "; "))")")
        }
        if !state.removedByEngine && source.source.isValid {
            report.callouts.sourcesValidAfterShutDown += 1
            report.violation("sources: \(label) is still valid after its loop shut down (L4)")
        }
    }
}
