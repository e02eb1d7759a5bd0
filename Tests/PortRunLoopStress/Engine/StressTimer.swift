import Foundation
import PortRunLoopKit
import Synchronization

/// One timer of a stress round, added to a consumer's loop from another thread: a one-shot
/// (which may re-arm itself from its block a few times by setting `fireDate`, and may be re-armed
/// from other threads) or a repeating timer with a 0.1–1 ms interval (which now and then moves its
/// own next date, and invalidates itself after a bounded number of fires unless another thread
/// invalidates it first).
///
/// Thread-safety: `Sendable`; the block runs on the consumer's thread, everything else anywhere.
final class StressTimer: Sendable {
    let id: Int
    let consumer: StressConsumer
    let repeats: Bool
    let timer: RunLoopTimer
    let records: StressTimerRecords

    init(id: Int, consumer: StressConsumer, firstDate: Date, interval: TimeInterval, repeats: Bool,
         rng: SeededGenerator, rearms: Int, fires: Int) {
        self.id = id
        self.consumer = consumer
        self.repeats = repeats
        let records = StressTimerRecords(firstDate: firstDate, rng: rng, rearms: rearms, fires: fires)
        self.records = records
        self.timer = RunLoopTimer(fireAt: firstDate, interval: interval, repeats: repeats,
                                  Self.block(records: records, repeats: repeats, loopID: consumer.loopID))
    }

    /// The block: captures the records, not the stress timer (the timer is its argument).
    private static func block(records: StressTimerRecords, repeats: Bool,
                              loopID: ObjectIdentifier) -> @Sendable (RunLoopTimer) -> Void {
        { timer in
            records.marker.handlerStarted()
            let now = Date()
            if ObjectIdentifier(PortRunLoop.current) != loopID { records.wrongThread.add(1, ordering: .relaxed) }
            records.state.update { state in
                state.fires.append(.init(now: now, seen: timer.fireDate, armingsLogged: state.armings.count))
                if repeats {
                    state.firesLeft -= 1
                    if state.firesLeft <= 0 {
                        state.selfInvalidated = true
                        timer.invalidate()
                        records.marker.cancelled()
                        records.marker.settled() // this call is the only one that can be in flight
                    } else if state.rng.chance(5) {
                        let date = now.addingTimeInterval(Double.random(in: 0.0001...0.002, using: &state.rng))
                        state.armings.append(.init(date: date, by: .block))
                        timer.fireDate = date // replaces the next date
                    }
                } else if state.rearmsLeft > 0 {
                    state.rearmsLeft -= 1
                    let date = now.addingTimeInterval(Double.random(in: 0...0.001, using: &state.rng))
                    state.armings.append(.init(date: date, by: .block))
                    timer.fireDate = date // keeps the one-shot valid for one more fire
                }
            }
        }
    }

    /// Re-arms the timer from the calling thread (not its loop's): logs the arming and sets
    /// `fireDate` under the records' lock, so a fire that starts later sees it in the log.
    func rearm(to date: Date) {
        records.state.update { state in
            state.armings.append(.init(date: date, by: .otherThread))
            timer.fireDate = date
        }
    }

    /// Invalidates the timer from the calling thread and sets the marker as soon as `invalidate()`
    /// returned.
    func invalidateFromOtherThread() {
        records.state.update { $0.invalidatedByEngine = true }
        timer.invalidate()
        records.marker.cancelled()
    }

    /// "one-shot timer 12 (c3)" for violations.
    var label: String { "\(repeats ? "repeating" : "one-shot") timer \(id) (c\(consumer.id))" }
}
