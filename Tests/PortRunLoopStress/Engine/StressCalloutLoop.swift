import Foundation
import PortRunLoopKit
import Synchronization

/// What the observers and custom sources of one consumer loop share: its turn clock and the
/// check of observer order within each round of calls.
///
/// Every consumer has a *clock* observer (order `Int.min`, every activity, common modes, never
/// removed), added before any other observer or source of the loop, so it is the first observer
/// called in every round (one activity's calls, Semantics.md O3). It opens a round for the
/// observers after it, and ticks ``clock`` at `beforeSources` and `afterWaiting` — the reports
/// that open a pass that handles sources — so a custom source's `perform` can tell two passes
/// apart (V4: at most one `perform` per pass).
///
/// Within a round each observer must be of the round's activity and of an order not lower than
/// the one before it; observers of equal order must always come in the same relative order (the
/// order they were added to the loop, which the engine cannot see across threads, but which does
/// not change).
///
/// Thread-safety: `Sendable`; the round state is touched only on the loop's thread, under a lock
/// so the verifier may read it after the thread joined.
final class StressCalloutLoop: Sendable {
    struct Pair: Hashable, Sendable {
        let first: Int, second: Int
    }

    struct Call: Sendable {
        let order: Int, id: Int
    }

    struct State: Sendable {
        var activity: RunLoopActivity?
        var round: [Call] = []
        /// Observers of equal order seen one after the other in a round (first called first).
        var precedence: Set<Pair> = []
        var rounds = 0
        var orderViolations = 0
        var problems: [String] = []
    }

    let consumer: StressConsumer
    /// Passes that reported `beforeSources` or `afterWaiting` (see the type's comment).
    let clock = Atomic<Int>(0)
    let state = Locked(State())

    init(consumer: StressConsumer) { self.consumer = consumer }

    /// The clock observer's call: closes the round before, opens one for `activity`.
    func clockCalled(_ activity: RunLoopActivity) {
        if activity == .beforeSources || activity == .afterWaiting { clock.add(1, ordering: .relaxed) }
        state.withLock { state in
            state.activity = activity
            state.round.removeAll(keepingCapacity: true)
            state.rounds += 1
        }
    }

    /// Another observer's call, in the round the clock opened.
    func observerCalled(id: Int, order: Int, activity: RunLoopActivity) {
        state.withLock { state in
            guard state.activity == activity else {
                let open = state.activity.map(StressRunTrace.name) ?? "none"
                report(&state, "observer \(id) (order \(order)) called for \(StressRunTrace.name(activity)) in a round of \(open): "
                    + "the clock (order Int.min) was not called first")
                return
            }
            if let last = state.round.last, last.order > order {
                report(&state, "observer \(id) (order \(order)) called after observer \(last.id) (order \(last.order)) "
                    + "for \(StressRunTrace.name(activity)) (O3: lower orders first)")
            }
            for earlier in state.round where earlier.order == order {
                if state.precedence.contains(Pair(first: id, second: earlier.id)) {
                    report(&state, "observers \(earlier.id) and \(id), both of order \(order), were called in both orders "
                        + "(O3: equal orders in the order they were added)")
                }
                state.precedence.insert(Pair(first: earlier.id, second: id))
            }
            state.round.append(Call(order: order, id: id))
        }
    }

    private func report(_ state: inout State, _ text: String) {
        state.orderViolations += 1
        if state.problems.count < 5 { state.problems.append("c\(consumer.id): \(text)") }
    }
}
