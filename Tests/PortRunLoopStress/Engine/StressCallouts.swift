import Foundation
import PortRunLoopKit
import Synchronization

/// The observer and custom-source part of a stress round (``StressConfiguration/observersAndSources``):
/// the callouts a loop makes into code of its own choosing.
///
/// Every consumer gets, from the thread that starts it, its clock observer (``StressCalloutLoop``),
/// ``observersPerLoop`` observers and ``sourcesPerLoop`` custom sources. Producers signal random
/// sources (1–3 signals, then most of the time a wake-up), add one-shot and repeating observers
/// and, with chaos, invalidate random observers from their own threads. The source chaos thread
/// invalidates observers while they are being called and sources while signalled, removes others
/// from their mode, adds replacements, and signals sources and waits for the perform that covers
/// the signal (``StressCalloutChaos``). When the producers are done, every one-shot observer still
/// armed must be called and every signal performed.
///
/// Choices (placement, order, activities) come from generators derived from the round's seed.
///
/// Thread-safety: `Sendable`; the registry is behind a lock.
final class StressCallouts: Sendable {
    struct Registry: Sendable {
        var loops: [Int: StressCalloutLoop] = [:]
        var observers: [StressObserver] = []
        var sources: [StressCustomSource] = []
        /// Candidates for the chaos and the producers (pruned as they are invalidated or removed).
        var liveObservers: [StressObserver] = []
        var liveSources: [StressCustomSource] = []
        var retiring: Set<Int> = []
    }

    static let observersPerLoop = 2
    static let sourcesPerLoop = 2
    /// Live repeating observers per consumer, at most (producers add more as they go).
    static let repeatingPerLoop = 4

    let registry = Locked(Registry())
    let seed: UInt64
    /// How long a waiter waits for a call or a perform before reporting it missing.
    let timeout: Double
    private let nextID = Atomic<Int>(0)
    let observersInvalidated = Atomic<Int>(0)
    let observersInvalidatedWhileCalled = Atomic<Int>(0)
    let observersRemoved = Atomic<Int>(0)
    let sourcesInvalidated = Atomic<Int>(0)
    let sourcesInvalidatedWhileSignalled = Atomic<Int>(0)
    let sourcesRemoved = Atomic<Int>(0)
    let signalsAwaited = Atomic<Int>(0)
    let wakeUps = Atomic<Int>(0)

    init(config: StressConfiguration, roundSeed: UInt64) {
        self.seed = SeededGenerator.derive(roundSeed, 0x0B5_0000)
        self.timeout = max(config.roundTimeout / 8, 1)
    }

    func newID() -> Int { nextID.add(1, ordering: .relaxed).newValue }

    /// Hook: a consumer started (from the thread that made it, before any other thread knows it):
    /// its clock first, then its observers and sources.
    func consumerStarted(_ consumer: StressConsumer) {
        let loopState = StressCalloutLoop(consumer: consumer)
        registry.withLock { $0.loops[consumer.id] = loopState }
        let clock = StressObserver(id: newID(), consumer: consumer, loopState: loopState, activities: .allActivities,
                                   repeats: true, order: Int.min, placement: .common, isClock: true)
        registry.withLock { $0.observers.append(clock) }
        clock.add()
        var rng = SeededGenerator(seed: SeededGenerator.derive(seed, UInt64(consumer.id)))
        for _ in 0..<Self.observersPerLoop { addObserver(on: consumer, repeats: !rng.chance(25), rng: &rng) }
        for _ in 0..<Self.sourcesPerLoop { addSource(on: consumer, rng: &rng) }
    }

    /// Hook: `consumer` is about to retire: its loop's shutdown invalidates its observers and
    /// sources, so nothing more is owed by them.
    func consumerRetiring(_ consumer: StressConsumer) {
        let (observers, sources) = registry.withLock { registry -> ([StressObserver], [StressCustomSource]) in
            registry.retiring.insert(consumer.id)
            registry.liveObservers.removeAll { $0.consumer === consumer }
            registry.liveSources.removeAll { $0.consumer === consumer }
            return (registry.observers.filter { $0.consumer === consumer }, registry.sources.filter { $0.consumer === consumer })
        }
        for observer in observers { observer.records.state.update { $0.waived = true } }
        for source in sources { source.records.state.update { $0.waived = true } }
    }

    private func placement(_ rng: inout SeededGenerator) -> StressObserver.Placement {
        let roll = Int.random(in: 0..<100, using: &rng)
        return roll < 45 ? .default : roll < 92 ? .common : .neverRun
    }

    /// Adds an observer to `consumer` from the calling thread: of every activity (half of them,
    /// so CF's order can be checked) or of a random subset.
    @discardableResult
    func addObserver(on consumer: StressConsumer, repeats: Bool, rng: inout SeededGenerator) -> StressObserver? {
        let all: [RunLoopActivity] = [.entry, .beforeTimers, .beforeSources, .beforeWaiting, .afterWaiting, .exit]
        var activities: RunLoopActivity = .allActivities
        if rng.chance(50) {
            activities = []
            for activity in all where rng.chance(40) { activities.insert(activity) }
            if activities.isEmpty { activities = all.randomElement(using: &rng)! }
        }
        let order = Int.random(in: -1...2, using: &rng)
        let placement = placement(&rng)
        let made = registry.withLock { registry -> (StressObserver, Bool)? in
            guard let loopState = registry.loops[consumer.id] else { return nil }
            registry.liveObservers.removeAll { !$0.observer.isValid }
            if repeats && registry.liveObservers.filter({ $0.consumer === consumer && $0.repeats }).count >= Self.repeatingPerLoop {
                return nil
            }
            let observer = StressObserver(id: newID(), consumer: consumer, loopState: loopState, activities: activities,
                                          repeats: repeats, order: order, placement: placement)
            registry.observers.append(observer)
            let retiring = registry.retiring.contains(consumer.id)
            if !retiring { registry.liveObservers.append(observer) }
            return (observer, retiring)
        }
        guard let (observer, retiring) = made else { return nil }
        if retiring { observer.records.state.update { $0.waived = true } }
        observer.add()
        return observer
    }

    /// Adds a custom source to `consumer` from the calling thread.
    func addSource(on consumer: StressConsumer, rng: inout SeededGenerator) {
        let order = Int.random(in: -1...1, using: &rng)
        let placement = placement(&rng)
        let made = registry.withLock { registry -> (StressCustomSource, Bool)? in
            guard let loopState = registry.loops[consumer.id] else { return nil }
            let source = StressCustomSource(id: newID(), consumer: consumer, loopState: loopState, order: order, placement: placement)
            registry.sources.append(source)
            let retiring = registry.retiring.contains(consumer.id)
            if !retiring { registry.liveSources.append(source) }
            return (source, retiring)
        }
        guard let (source, retiring) = made else { return }
        if retiring { source.records.state.update { $0.waived = true } }
        source.add()
    }

    /// A random live source of `consumer` (nil when it has none).
    func pickSource(of consumer: StressConsumer, rng: inout SeededGenerator) -> StressCustomSource? {
        let pick = Int.random(in: 0..<1_000_000, using: &rng)
        return registry.withLock { registry in
            let candidates = registry.liveSources.filter { $0.consumer === consumer }
            return candidates.isEmpty ? nil : candidates[pick % candidates.count]
        }
    }

    /// Producer operation: signals a random source of a random consumer 1–3 times, then (most of
    /// the time) wakes its loop. A signal without a wake-up is still performed: the loop looks at
    /// its sources' flags before it sleeps, and the next wake-up (another producer's, or the
    /// round's end) finds it.
    func producerSignal(rng: inout SeededGenerator, round: StressRound) {
        let consumer = round.pickConsumer(rng: &rng)
        let times = Int.random(in: 1...3, using: &rng)
        let wake = rng.chance(90)
        guard let source = pickSource(of: consumer, rng: &rng) else { return }
        for _ in 0..<times { source.signal() }
        if wake {
            consumer.loop.wakeUp()
            wakeUps.add(1, ordering: .relaxed)
        }
    }

    /// Producer operation: adds a one-shot (most of the time) or repeating observer to a random
    /// consumer.
    func producerAddObserver(rng: inout SeededGenerator, round: StressRound) {
        let consumer = round.pickConsumer(rng: &rng)
        addObserver(on: consumer, repeats: rng.chance(30), rng: &rng)
    }

    /// Producer operation (chaos): invalidates a random live observer from this thread, without
    /// waiting for anything.
    func producerInvalidateObserver(rng: inout SeededGenerator) {
        let pick = Int.random(in: 0..<1_000_000, using: &rng)
        guard let observer = registry.withLock({ registry -> StressObserver? in
            guard !registry.liveObservers.isEmpty else { return nil }
            return registry.liveObservers.remove(at: pick % registry.liveObservers.count)
        }) else { return }
        observer.invalidateFromOtherThread()
        observersInvalidated.add(1, ordering: .relaxed)
    }
}
