import Foundation

/// The source chaos thread of a round (with chaos on): a fixed number of actions, spread over the
/// round by waiting for the producers' progress (no sleeps), each chosen by its own seeded
/// generator — cancel a ready fd source and watch a new one, invalidate a firing repeating timer
/// and add a new one, invalidate a one-shot, re-arm a one-shot, invalidate an observer while it is
/// being called or a custom source while signalled, remove either from its mode, signal a source
/// and wait for its perform (``StressCalloutChaos``). Every cancellation comes from this thread,
/// never from the loop's, and is checked with a ``StressCancelMarker``.
///
/// Thread-safety: runs on its own thread; shares only the round's thread-safe parts.
enum StressSourceChaos {
    /// Actions per round for `config`.
    static func actions(for config: StressConfiguration) -> Int {
        guard config.chaos, config.fileDescriptors || config.timers || config.observersAndSources else { return 0 }
        return max(4, config.itemsPerProducer / 50)
    }

    static func run(round: StressRound, seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        let count = actions(for: round.config)
        let total = round.config.producers * round.config.itemsPerProducer
        var kinds: [(weight: Int, action: (inout SeededGenerator) -> Void)] = []
        if let fds = round.fileDescriptors {
            kinds.append((45, { fds.cancelAndReplace(rng: &$0, round: round) }))
        }
        if let timers = round.timers {
            kinds.append((30, { timers.invalidateRepeatingWhileFiring(rng: &$0, round: round) }))
            kinds.append((15, { timers.invalidateOneShot(rng: &$0) }))
            kinds.append((10, { timers.rearmFromOtherThread(rng: &$0) }))
        }
        if let callouts = round.callouts {
            kinds.append((12, { callouts.invalidateObserverWhileCalled(rng: &$0, round: round) }))
            kinds.append((6, { callouts.removeObserver(rng: &$0, round: round) }))
            kinds.append((10, { callouts.invalidateSourceWhileSignalled(rng: &$0, round: round) }))
            kinds.append((5, { callouts.removeSource(rng: &$0, round: round) }))
            kinds.append((12, { callouts.signalAndAwait(rng: &$0, round: round) }))
        }
        let weights = kinds.reduce(0) { $0 + $1.weight }
        for index in 0..<count {
            let due = (index + 1) * total / (count + 1)
            round.sourceProgress.withLock { $0 = "action \(index): waiting for the producers' operation \(due)" }
            _ = round.sourceOpsDone.wait(seconds: round.config.roundTimeout) { $0 >= due }
            var roll = Int.random(in: 0..<weights, using: &rng)
            for kind in kinds {
                if roll < kind.weight {
                    kind.action(&rng)
                    break
                }
                roll -= kind.weight
            }
        }
        round.sourceProgress.withLock { $0 = "finished" }
    }
}
