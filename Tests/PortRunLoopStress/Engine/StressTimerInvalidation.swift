import Foundation
import PortRunLoopKit

/// Timers invalidated from threads other than their loop's: a random one-shot (it may be firing
/// or about to), and a repeating timer right after it fired (so it is firing every 0.1–1 ms while
/// `invalidate()` runs). The marker is set as soon as `invalidate()` returned; after a
/// `performAndWait` round trip on the loop, no fire can still be in flight, so the marker settles.
///
/// Thread-safety: called from producer threads, the source chaos thread and the round's end.
extension StressTimers {
    /// Invalidates a random one-shot from this thread (it may be firing or about to).
    func invalidateOneShot(rng: inout SeededGenerator) {
        guard let timer = pickOneShot(rng: &rng) else { return }
        timer.invalidateFromOtherThread()
        invalidated.add(1, ordering: .relaxed)
    }

    /// Source chaos: waits until a random repeating timer fires, invalidates it from this thread,
    /// and adds a new repeating timer to a random consumer.
    func invalidateRepeatingWhileFiring(rng: inout SeededGenerator, round: StressRound) {
        let pick = Int.random(in: 0..<1_000_000, using: &rng)
        let victim = registry.withLock { registry -> StressTimer? in
            registry.repeating.removeAll { !$0.timer.isValid }
            return registry.repeating.isEmpty ? nil : registry.repeating.remove(at: pick % registry.repeating.count)
        }
        if let victim { invalidateWhileFiring(victim, round: round) }
        addRepeating(rng: &rng, round: round)
    }

    /// Waits (bounded) until `timer` fires once more, invalidates it from this thread, sets its
    /// marker, and settles it after a round trip on its loop.
    func invalidateWhileFiring(_ timer: StressTimer, round: StressRound) {
        let before = timer.records.state.snapshot.fires.count
        round.sourceProgress.withLock { $0 = "waiting for \(timer.label) to fire" }
        let fired = timer.records.state.wait(seconds: timeout) { $0.fires.count > before || $0.selfInvalidated || $0.retired }
        let state = timer.records.state.snapshot
        if !fired {
            timer.records.state.update { $0.neverFiredReported = true }
            round.runtimeViolation("timers: \(timer.label) (valid=\(timer.timer.isValid)) did not fire within \(timeout)s on a running loop")
        }
        round.sourceProgress.withLock { $0 = "invalidating \(timer.label)" }
        timer.invalidateFromOtherThread()
        invalidated.add(1, ordering: .relaxed)
        if timer.timer.isValid { round.runtimeViolation("timers: \(timer.label) is still valid after invalidate() returned") }
        if fired && !state.selfInvalidated && !state.retired { invalidatedWhileFiring.add(1, ordering: .relaxed) }
        if (try? timer.consumer.loop.performAndWait({})) != nil || timer.consumer.loop.isShutDown {
            timer.records.marker.settled()
        }
    }
}
