import Foundation
import PortRunLoopKit

/// Checks the timer part of a finished round, per timer: every block ran on its loop's thread and
/// none started after `invalidate()` returned (``StressCancelMarker``).
///
/// Repeating timers (never re-armed from other threads): each fire is at or after the date the
/// block saw as its `fireDate` (the date it fired for), and those dates strictly increase (no date
/// fired twice).
///
/// One-shot timers: each fire is matched, in order, to the earliest arming not matched yet that was
/// logged before the fire started and whose date the fire is not before. No arming left: the timer
/// fired twice for one arming ("double-fire"); armings left but all in the future: "early". So a
/// one-shot fires at most once per arming and never before the date it was armed for. Then the
/// last arming must have been honoured, unless the engine invalidated the timer or its loop shut
/// down: if a fire started after it was logged, one such fire must be at or after its date —
/// otherwise the re-arm was dropped ("rearm-lost": the timer fired for an older date after the
/// re-arm had returned, and never again); if it was made by the block, the timer must have fired
/// again; with no fire at all, the timer never fired. (An arming from another thread logged while
/// or after the last fire ran may race with the one-shot's end of life, which the documentation
/// allows: it is not checked.)
///
/// Thread-safety: used by one thread after every producer, chaos and consumer thread joined.
extension StressTimers {
    func verify(into report: inout StressReport) {
        report.timersInvalidated += invalidated.load(ordering: .acquiring)
        report.timersInvalidatedWhileFiring += invalidatedWhileFiring.load(ordering: .acquiring)
        for timer in registry.withLock({ $0.all }) {
            let state = timer.records.state.snapshot
            report.timersAdded += 1
            if timer.repeats { report.timersRepeating += 1 }
            report.timersFired += state.fires.count
            report.timersRearmedInBlock += state.armings.filter { $0.by == .block }.count
            report.timersRearmedFromOtherThreads += state.armings.filter { $0.by == .otherThread }.count
            report.timersInFlightAtInvalidate += timer.records.marker.inFlightAtCancel.load(ordering: .acquiring)
            let after = timer.records.marker.startedAfterCancel.load(ordering: .acquiring)
            report.countViolations(after, in: \.timersAfterInvalidate,
                                   "timers: \(timer.label): \(after) fire(s) started after invalidate() returned")
            let wrong = timer.records.wrongThread.load(ordering: .acquiring)
            report.countViolations(wrong, in: \.timersWrongThread,
                                   "timers: \(timer.label): \(wrong) fire(s) on a thread other than its loop's")
            if timer.repeats {
                Self.verifyRepeating(timer, state, into: &report)
            } else {
                Self.verifyOneShot(timer, state, into: &report)
            }
        }
    }

    private static func verifyRepeating(_ timer: StressTimer, _ state: StressTimerRecords.State, into report: inout StressReport) {
        var previous: Date?
        for (index, fire) in state.fires.enumerated() {
            if fire.now < fire.seen {
                report.timersEarly += 1
                report.violation("timers: \(timer.label): fire \(index) at \(stamp(fire.now)), before its date \(stamp(fire.seen))")
            }
            if let previous, fire.seen <= previous {
                report.timersDoubleFire += 1
                report.violation("timers: \(timer.label): fire \(index) for date \(stamp(fire.seen)), not after the previous fire's \(stamp(previous))")
            }
            previous = fire.seen
        }
        if state.neverFiredReported { report.timersNeverFired += 1 }
    }

    private static func verifyOneShot(_ timer: StressTimer, _ state: StressTimerRecords.State, into report: inout StressReport) {
        let armings = state.armings
        var matched = -1
        for (index, fire) in state.fires.enumerated() {
            if let newest = armings.prefix(fire.armingsLogged).last, newest.by == .otherThread, fire.now < newest.date {
                report.timersFiredForOlderDate += 1
            }
            let candidates = (matched + 1)..<max(matched + 1, fire.armingsLogged)
            if let match = candidates.first(where: { armings[$0].date <= fire.now }) {
                matched = match
            } else if candidates.isEmpty {
                report.timersDoubleFire += 1
                report.violation("timers: \(timer.label): fire \(index) at \(stamp(fire.now)) has no arming left "
                    + "(fired twice for one arming; armings: \(describe(armings)))")
            } else {
                report.timersEarly += 1
                report.violation("timers: \(timer.label): fire \(index) at \(stamp(fire.now)) is before every date it may "
                    + "have been armed for (armings: \(describe(armings)))")
                matched = candidates.lowerBound
            }
        }
        if state.neverFiredReported {
            report.timersNeverFired += 1
            return
        }
        guard !state.invalidatedByEngine, !state.retired, let last = armings.indices.last else { return }
        let lastDate = armings[last].date
        let firedSince = state.fires.filter { $0.armingsLogged > last }
        if firedSince.contains(where: { $0.now >= lastDate }) { return }
        if let stale = firedSince.first {
            report.timersRearmLost += 1
            report.violation("timers: \(timer.label): re-armed (\(armings[last].by.rawValue)) for \(stamp(lastDate)), then fired at "
                + "\(stamp(stale.now)) — for an older date — and never again: the re-arm was dropped (rearm-lost; armings: \(describe(armings)))")
        } else if armings[last].by == .block {
            report.timersRearmLost += 1
            report.violation("timers: \(timer.label): re-armed from its own block for \(stamp(lastDate)) but never fired again (rearm-lost)")
        } else if state.fires.isEmpty {
            report.timersNeverFired += 1
            report.violation("timers: \(timer.label): armed for \(stamp(lastDate)) on a running loop, became invalid without firing")
        }
    }

    static func stamp(_ date: Date) -> String { String(format: "%.6f", date.timeIntervalSinceReferenceDate) }

    static func describe(_ armings: [StressTimerRecords.Arming]) -> String {
        armings.map { "\(stamp($0.date)) by \($0.by.rawValue)" }.joined(separator: ", ")
    }
}
