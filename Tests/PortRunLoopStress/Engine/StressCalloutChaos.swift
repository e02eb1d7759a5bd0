import Foundation
import PortRunLoopKit

/// The observer and custom-source actions of the source chaos thread, and the round's end.
///
/// Every invalidation and removal comes from a thread other than the loop's. An invalidation sets
/// the item's ``StressCancelMarker`` as soon as `invalidate()` returned (one call already let in
/// may still start, O1/V6); a removal only settles it, after a `performAndWait` round trip on the
/// loop (a removal from another thread applies before the loop's next turn). After the round trip
/// no call or perform may start.
///
/// Waiting for a call or a perform pokes the loop — a wake-up (`afterWaiting`, then a pass) and a
/// stop (`exit`, and a new run's `entry`) — at once and then every 20 ms, so an observer of one rare
/// activity is called too; the wait is bounded and a timeout is a violation (a lost signal, a
/// one-shot observer never called).
///
/// Thread-safety: called from the source chaos thread and the round's end.
extension StressCallouts {
    /// Waits (bounded) until `done` holds, poking `consumer`'s loop before each slice.
    func awaitPoking(_ consumer: StressConsumer, stop: Bool, _ done: (Double) -> Bool) -> Bool {
        if done(0) { return true }
        var waited = 0.0
        while true {
            consumer.loop.wakeUp()
            if stop { consumer.loop.stop() }
            if done(0.02) { return true }
            waited += 0.02
            if waited >= timeout || consumer.loop.isShutDown { return done(0) }
        }
    }

    /// Settles an item's marker once no call can be in flight: after a round trip on its loop, or
    /// once that loop is shut down (a dead loop calls nothing).
    func settle(_ marker: StressCancelMarker, on consumer: StressConsumer) {
        if (try? consumer.loop.performAndWait({})) != nil || consumer.loop.isShutDown { marker.settled() }
    }

    private func takeLive<T>(_ list: WritableKeyPath<Registry, [T]>, rng: inout SeededGenerator,
                             where eligible: (T) -> Bool = { _ in true }) -> T? {
        let pick = Int.random(in: 0..<1_000_000, using: &rng)
        return registry.withLock { registry in
            let indices = registry[keyPath: list].indices.filter { eligible(registry[keyPath: list][$0]) }
            guard !indices.isEmpty else { return nil }
            return registry[keyPath: list].remove(at: indices[pick % indices.count])
        }
    }

    /// Chaos: waits until a random repeating observer is called once more, invalidates it from this
    /// thread (so the invalidation races with its next calls), and adds a new one.
    func invalidateObserverWhileCalled(rng: inout SeededGenerator, round: StressRound) {
        if let victim = takeLive(\.liveObservers, rng: &rng, where: { $0.repeats && $0.observer.isValid }) {
            round.sourceProgress.withLock { $0 = "waiting for \(victim.label) to be called" }
            let before = victim.records.state.snapshot.calls
            let called = victim.placement != .neverRun && awaitPoking(victim.consumer, stop: true) { seconds in
                victim.records.state.wait(seconds: seconds) { $0.calls > before || $0.waived }
            }
            round.sourceProgress.withLock { $0 = "invalidating \(victim.label)" }
            victim.invalidateFromOtherThread()
            observersInvalidated.add(1, ordering: .relaxed)
            if victim.observer.isValid { round.runtimeViolation("observers: \(victim.label) is still valid after invalidate() returned") }
            if called && !victim.records.state.snapshot.waived { observersInvalidatedWhileCalled.add(1, ordering: .relaxed) }
            settle(victim.records.marker, on: victim.consumer)
        }
        addObserver(on: round.pickConsumer(rng: &rng), repeats: true, rng: &rng)
    }

    /// Chaos: removes a random observer from its mode from this thread, and adds a new one.
    func removeObserver(rng: inout SeededGenerator, round: StressRound) {
        if let victim = takeLive(\.liveObservers, rng: &rng, where: { $0.observer.isValid }) {
            round.sourceProgress.withLock { $0 = "removing \(victim.label)" }
            victim.removeFromOtherThread()
            observersRemoved.add(1, ordering: .relaxed)
            settle(victim.records.marker, on: victim.consumer)
        }
        addObserver(on: round.pickConsumer(rng: &rng), repeats: rng.chance(70), rng: &rng)
    }

    /// Chaos: signals a random source, wakes its loop and invalidates the source at once from this
    /// thread (racing with its perform), then adds a new source.
    func invalidateSourceWhileSignalled(rng: inout SeededGenerator, round: StressRound) {
        if let victim = takeLive(\.liveSources, rng: &rng) {
            round.sourceProgress.withLock { $0 = "invalidating \(victim.label)" }
            victim.signal()
            victim.consumer.loop.wakeUp()
            let pending = victim.source.isSignalled
            victim.invalidateFromOtherThread()
            sourcesInvalidated.add(1, ordering: .relaxed)
            if pending { sourcesInvalidatedWhileSignalled.add(1, ordering: .relaxed) }
            // (Not `isSignalled`: a producer's signal that passed the validity test just before may
            // still set the flag; the marker checks what that can start.)
            if victim.source.isValid { round.runtimeViolation("sources: \(victim.label) is still valid after invalidate() returned") }
            settle(victim.records.marker, on: victim.consumer)
        }
        addSource(on: round.pickConsumer(rng: &rng), rng: &rng)
    }

    /// Chaos: removes a random source from its mode from this thread, signals it (a source in no
    /// mode must not perform), and adds a new source.
    func removeSource(rng: inout SeededGenerator, round: StressRound) {
        if let victim = takeLive(\.liveSources, rng: &rng) {
            round.sourceProgress.withLock { $0 = "removing \(victim.label)" }
            victim.removeFromOtherThread()
            sourcesRemoved.add(1, ordering: .relaxed)
            settle(victim.records.marker, on: victim.consumer)
            victim.signal()
            victim.consumer.loop.wakeUp()
        }
        addSource(on: round.pickConsumer(rng: &rng), rng: &rng)
    }

    /// Chaos: signals a random source and waits for the perform that covers the signal.
    func signalAndAwait(rng: inout SeededGenerator, round: StressRound) {
        let consumer = round.pickConsumer(rng: &rng)
        guard let source = pickSource(of: consumer, rng: &rng), source.placement != .neverRun else { return }
        round.sourceProgress.withLock { $0 = "waiting for \(source.label) to perform a signal" }
        let ticket = source.signal()
        consumer.loop.wakeUp()
        signalsAwaited.add(1, ordering: .relaxed)
        awaitPerform(source, after: ticket, round: round)
    }

    private func awaitPerform(_ source: StressCustomSource, after ticket: Int, round: StressRound) {
        let performed = awaitPoking(source.consumer, stop: false) { seconds in
            source.records.state.wait(seconds: seconds) { $0.lastPerformTicket > ticket || $0.waived || $0.invalidatedByEngine || $0.removedByEngine }
        }
        if !performed {
            source.records.state.update { $0.lostReported = true }
            round.runtimeViolation("sources: \(source.label) was signalled (ticket \(ticket)) on a running loop but no perform "
                + "started after the signal within \(timeout)s (lost signal, V4)")
        }
    }

    /// Hook: the producers (and the source chaos thread) have finished. Every one-shot observer still
    /// armed on a running loop must be called, and every source signalled must perform after its
    /// last signal.
    func producersFinished(round: StressRound) {
        let (observers, sources) = registry.withLock { ($0.observers, $0.sources) }
        // One poke of every loop first: most armed one-shots are called by it.
        for consumer in round.slots.withLock({ $0 }) {
            consumer.loop.wakeUp()
            consumer.loop.stop()
        }
        for observer in observers where !observer.repeats && observer.placement != .neverRun {
            let state = observer.records.state.snapshot
            guard state.calls == 0, !state.invalidatedByEngine, !state.removedByEngine, !state.waived else { continue }
            round.sourceProgress.withLock { $0 = "round end: waiting for \(observer.label) to be called" }
            let called = awaitPoking(observer.consumer, stop: true) { seconds in
                observer.records.state.wait(seconds: seconds) { $0.calls > 0 || $0.waived }
            }
            if !called {
                observer.records.state.update { $0.neverCalledReported = true }
                round.runtimeViolation("observers: \(observer.label) was armed on a running loop but never called within \(timeout)s")
            }
        }
        for source in sources where source.isLive {
            let state = source.records.state.snapshot
            guard state.signals > 0, state.lastPerformTicket < state.lastSignalTicket else { continue }
            round.sourceProgress.withLock { $0 = "round end: waiting for \(source.label) to perform its last signal" }
            awaitPerform(source, after: state.lastSignalTicket, round: round)
        }
    }
}
