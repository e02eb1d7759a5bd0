import Foundation
import Synchronization

/// What a stress timer's block and the threads that arm it record, kept apart from the timer so
/// the block does not retain it, and the verifier can read it after every thread joined.
///
/// Every arming (the first date, and every `fireDate` set — from the timer's own block or from
/// another thread) is logged and applied under this state's lock, and the block reads the log
/// under the same lock: an arming logged before a fire's entry was set before that fire started.
///
/// Thread-safety: `Sendable`; the state is behind a condition's lock.
final class StressTimerRecords: Sendable {
    enum ArmedBy: String, Sendable { case creator, block, otherThread }

    struct Arming: Sendable {
        let date: Date
        let by: ArmedBy
    }

    struct Fire: Sendable {
        /// `Date()` when the block started.
        let now: Date
        /// The timer's `fireDate` as the block saw it (the date of this fire for a timer no other
        /// thread re-arms).
        let seen: Date
        /// How many armings were logged when the block started.
        let armingsLogged: Int
    }

    struct State: Sendable {
        var armings: [Arming] = []
        var fires: [Fire] = []
        /// The block's own choices (re-arming), from a generator derived from the round's seed.
        var rng: SeededGenerator
        /// One-shot: how many more times the block re-arms the timer by setting `fireDate`.
        var rearmsLeft: Int
        /// Repeating: fires left before the block invalidates the timer itself.
        var firesLeft: Int
        var selfInvalidated = false
        /// Invalidated by a producer, the chaos thread or the round's end, from another thread.
        var invalidatedByEngine = false
        /// Its consumer began retiring while the timer was valid (its loop's shutdown may
        /// invalidate the timer before it fires again).
        var retired = false
        /// The round's end waited in vain for an armed one-shot to fire (already reported).
        var neverFiredReported = false
    }

    let state: StressCondition<State>
    let marker = StressCancelMarker()
    /// Block calls on a thread other than the consumer loop's.
    let wrongThread = Atomic<Int>(0)

    init(firstDate: Date, rng: SeededGenerator, rearms: Int, fires: Int) {
        state = StressCondition(State(armings: [Arming(date: firstDate, by: .creator)], rng: rng,
                                      rearmsLeft: rearms, firesLeft: fires))
    }
}
