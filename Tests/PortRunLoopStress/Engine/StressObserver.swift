import Foundation
import PortRunLoopKit
import Synchronization

/// One run-loop observer of a stress round, on a consumer's loop: the clock (see
/// ``StressCalloutLoop``), or one of the round's repeating or one-shot observers, of every activity
/// or some, of order -1...2, in the default mode, the common modes, or a mode no one runs (it must
/// never be called).
///
/// Its handler checks, as it is called: the loop's thread, the mode (the consumers only run the
/// default mode where observers can see it), the activity among those it watches, CF's order of
/// activities (``StressRunTrace``, for observers of every activity), and its place in the round
/// (``StressCalloutLoop``); and it marks its start for the ``StressCancelMarker`` (nothing may
/// start after `invalidate()` returned, or after a removal was settled by a round trip).
///
/// Thread-safety: `Sendable`; the handler runs on the consumer's thread, everything else anywhere.
final class StressObserver: Sendable {
    enum Placement: String, Sendable { case `default`, common, neverRun }

    struct State: Sendable {
        var calls = 0
        var trace = StressRunTrace()
        var traceViolations = 0
        var problems: [String] = []
        /// Invalidated or removed by the engine, from another thread.
        var invalidatedByEngine = false
        var removedByEngine = false
        /// Its consumer began retiring (its loop's shutdown invalidates it).
        var waived = false
        /// A one-shot the round's end waited in vain for (already reported).
        var neverCalledReported = false
    }

    let id: Int
    let consumer: StressConsumer
    let activities: RunLoopActivity
    let repeats: Bool
    let order: Int
    let placement: Placement
    let isClock: Bool
    let observer: RunLoopObserver
    let records: Records

    /// What the handler records, kept apart from the observer so the handler does not retain it.
    final class Records: Sendable {
        let state = StressCondition(State())
        let marker = StressCancelMarker()
        let wrongThread = Atomic<Int>(0)
        let wrongMode = Atomic<Int>(0)
    }

    init(id: Int, consumer: StressConsumer, loopState: StressCalloutLoop, activities: RunLoopActivity,
         repeats: Bool, order: Int, placement: Placement, isClock: Bool = false) {
        self.id = id
        self.consumer = consumer
        self.activities = activities
        self.repeats = repeats
        self.order = order
        self.placement = placement
        self.isClock = isClock
        let records = Records()
        self.records = records
        let all = activities == .allActivities
        observer = RunLoopObserver(activities: activities, repeats: repeats, order: order) { [loopState, consumer] _, activity in
            records.marker.handlerStarted()
            guard consumer.loop.isCurrentThread else {
                records.wrongThread.add(1, ordering: .relaxed)
                return
            }
            let mode = consumer.loop.currentMode
            if placement == .neverRun || mode != .default { records.wrongMode.add(1, ordering: .relaxed) }
            if isClock {
                loopState.clockCalled(activity)
            } else {
                loopState.observerCalled(id: id, order: order, activity: activity)
            }
            records.state.update { state in
                state.calls += 1
                if !activities.contains(activity) {
                    Self.note(&state, "called for \(StressRunTrace.name(activity)), which it does not watch")
                }
                if all, let problem = state.trace.record(activity, mode: mode) { Self.note(&state, problem) }
            }
        }
    }

    private static func note(_ state: inout State, _ text: String) {
        state.traceViolations += 1
        if state.problems.count < 3 { state.problems.append(text) }
    }

    var mode: RunLoop.Mode {
        switch placement {
        case .default: .default
        case .common: .common
        case .neverRun: StressConsumer.privateMode
        }
    }

    /// Adds the observer to its consumer's loop from the calling thread.
    func add() { consumer.loop.add(observer, forMode: mode) }

    /// Invalidates the observer from the calling thread; sets the marker as soon as it returned.
    func invalidateFromOtherThread() {
        records.state.update { $0.invalidatedByEngine = true }
        observer.invalidate()
        records.marker.cancelled()
    }

    /// Removes the observer from its one mode from the calling thread (it stays valid; the loop
    /// applies the removal before its next turn, so calls may still start until a round trip).
    func removeFromOtherThread() {
        records.state.update { $0.removedByEngine = true }
        consumer.loop.remove(observer, forMode: mode)
    }

    /// "one-shot observer 12 (order 1, common, c3)" for violations.
    var label: String {
        isClock ? "clock observer \(id) (c\(consumer.id))"
            : "\(repeats ? "repeating" : "one-shot") observer \(id) (order \(order), \(placement.rawValue), c\(consumer.id))"
    }
}
