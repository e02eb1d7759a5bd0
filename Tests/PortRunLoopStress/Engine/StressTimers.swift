import Foundation
import PortRunLoopKit
import Synchronization

/// The timer part of a stress round. Producers add one-shot timers (due within 2 ms, some
/// re-arming themselves from their block) and short-interval repeating timers (some moving their
/// own next date) to random consumer loops and, with chaos, invalidate random one-shots; the
/// source chaos thread invalidates repeating timers while they fire, and one-shots. Producers and
/// the chaos thread also re-arm random one-shots from their own threads by setting `fireDate`
/// (half of the time one that is due; now and then inside the very turn that fires it). When the
/// producers are done, every repeating timer still valid is invalidated the same way, and every
/// one-shot still armed must fire.
///
/// Thread-safety: `Sendable`; the registry is behind a lock.
final class StressTimers: Sendable {
    struct Registry: Sendable {
        var all: [StressTimer] = []
        /// Candidates for re-arming and invalidation (pruned of invalid timers as they are met).
        var oneShots: [StressTimer] = []
        var repeating: [StressTimer] = []
        var retiring: Set<Int> = []
    }

    /// Live repeating timers per consumer, at most (each fires up to 10,000 times a second).
    static let repeatingPerLoop = 2

    let registry = Locked(Registry())
    let seed: UInt64
    /// How long a waiter waits for a fire before reporting it missing.
    let timeout: Double
    private let nextID = Atomic<Int>(0)
    let invalidated = Atomic<Int>(0)
    let invalidatedWhileFiring = Atomic<Int>(0)
    /// Set once the round's end has settled every timer: the final retirements then change nothing.
    private let settled = Atomic<Bool>(false)

    init(config: StressConfiguration, roundSeed: UInt64) {
        self.seed = SeededGenerator.derive(roundSeed, 0x71_0000)
        self.timeout = max(config.roundTimeout / 8, 1)
    }

    /// Hook: `consumer` is about to retire; its loop's shutdown will invalidate its timers. Only
    /// the timers still valid are affected (an invalid timer stays invalid: its checks stand).
    func consumerRetiring(_ consumer: StressConsumer) {
        guard !settled.load(ordering: .acquiring) else { return }
        let timers = registry.withLock { registry -> [StressTimer] in
            registry.retiring.insert(consumer.id)
            registry.oneShots.removeAll { $0.consumer === consumer }
            registry.repeating.removeAll { $0.consumer === consumer }
            return registry.all.filter { $0.consumer === consumer }
        }
        for timer in timers where timer.timer.isValid { timer.records.state.update { $0.retired = true } }
    }

    /// Adds a one-shot timer to a random consumer from this thread.
    func addOneShot(rng: inout SeededGenerator, round: StressRound) {
        let consumer = round.pickConsumer(rng: &rng)
        let date = Date(timeIntervalSinceNow: Double.random(in: -0.0005...0.002, using: &rng))
        let rearms = rng.chance(30) ? Int.random(in: 1...3, using: &rng) : 0
        let mode: RunLoop.Mode = rng.chance(50) ? .common : .default
        add(consumer: consumer, date: date, interval: 0, repeats: false, rearms: rearms, fires: 1, mode: mode)
    }

    /// Adds a repeating timer (0.1–1 ms) to a random consumer, unless it has enough already.
    func addRepeating(rng: inout SeededGenerator, round: StressRound) {
        let consumer = round.pickConsumer(rng: &rng)
        let interval = Double.random(in: 0.0001...0.001, using: &rng)
        let fires = Int.random(in: 10...60, using: &rng)
        let mode: RunLoop.Mode = rng.chance(50) ? .common : .default
        let busy = registry.withLock { registry in
            registry.repeating.removeAll { !$0.timer.isValid }
            return registry.repeating.filter { $0.consumer === consumer }.count >= Self.repeatingPerLoop
        }
        guard !busy else { return }
        add(consumer: consumer, date: Date(timeIntervalSinceNow: interval), interval: interval, repeats: true,
            rearms: 0, fires: fires, mode: mode)
    }

    @discardableResult
    private func add(consumer: StressConsumer, date: Date, interval: TimeInterval, repeats: Bool,
                     rearms: Int, fires: Int, mode: RunLoop.Mode) -> StressTimer {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let timer = StressTimer(id: id, consumer: consumer, firstDate: date, interval: interval, repeats: repeats,
                                rng: SeededGenerator(seed: SeededGenerator.derive(seed, UInt64(id))), rearms: rearms, fires: fires)
        let retiring = registry.withLock { registry -> Bool in
            registry.all.append(timer)
            let retiring = registry.retiring.contains(consumer.id)
            if !retiring {
                if repeats { registry.repeating.append(timer) } else { registry.oneShots.append(timer) }
            }
            return retiring
        }
        if retiring { timer.records.state.update { $0.retired = true } }
        consumer.loop.add(timer.timer, forMode: mode)
        return timer
    }

    /// A random valid one-shot timer (nil when there is none); with `due`, preferably one whose
    /// date has come (its loop is about to fire it).
    func pickOneShot(rng: inout SeededGenerator, due: Bool = false) -> StressTimer? {
        let pick = Int.random(in: 0..<1_000_000, using: &rng)
        return registry.withLock { registry in
            registry.oneShots.removeAll { !$0.timer.isValid }
            let now = Date()
            let dueOnes = due ? registry.oneShots.filter { $0.timer.fireDate <= now } : []
            let candidates = dueOnes.isEmpty ? registry.oneShots : dueOnes
            return candidates.isEmpty ? nil : candidates[pick % candidates.count]
        }
    }

    /// Sets a random one-shot's `fireDate` from this thread (0–2 ms ahead); half the time one that
    /// is due, so the re-arm races with the fire.
    func rearmFromOtherThread(rng: inout SeededGenerator) {
        let delay = Double.random(in: 0...0.002, using: &rng)
        pickOneShot(rng: &rng, due: rng.chance(50))?.rearm(to: Date(timeIntervalSinceNow: delay))
    }

    /// The re-arm race, made certain: adds a one-shot that is already due to a random consumer,
    /// queues a block behind it whose turn then fires it, and re-arms the timer (1–2 ms ahead)
    /// from this thread while that block holds the loop inside the turn. The turn may still fire
    /// the timer for its old date (a re-arm from another thread applies from the loop's next
    /// turn), but the re-arm must stand: the timer fires again, at or after the new date (T7).
    func rearmRacingFire(rng: inout SeededGenerator, round: StressRound) {
        let consumer = round.pickConsumer(rng: &rng)
        let delay = Double.random(in: 0.001...0.002, using: &rng)
        let timer = add(consumer: consumer, date: Date(timeIntervalSinceNow: -0.001), interval: 0, repeats: false,
                     rearms: 0, fires: 1, mode: .common)
        let inTurn = Latch(), rearmed = Latch()
        let timeout = self.timeout
        guard consumer.loop.perform(inModes: [.common], { inTurn.open(); _ = rearmed.wait(seconds: timeout) }) else { return }
        switch Self.waitForStart(inTurn, of: consumer, timeout: timeout) {
        case .started:
            timer.rearm(to: Date(timeIntervalSinceNow: delay))
            rearmed.open()
        case .discardedByRetirement:
            rearmed.open()
        case .timedOut:
            rearmed.open()
            round.runtimeViolation("timers: a block accepted by c\(consumer.id) did not start within \(timeout)s")
        }
    }

    enum BlockStart { case started, discardedByRetirement, timedOut }

    /// Waits for a block queued on `consumer`'s loop to open `started`. A consumer retired after the
    /// block was accepted may shut its loop down with the block still queued, which discards it
    /// (the consumer's documented rule): that is told apart from a block that never starts on a
    /// live loop by the loop being shut down.
    static func waitForStart(_ started: Latch, of consumer: StressConsumer, timeout: Double) -> BlockStart {
        let slice = 0.05
        var waited = 0.0
        while !started.wait(seconds: slice) {
            waited += slice
            if consumer.retiring.load(ordering: .acquiring), consumer.loop.isShutDown { return .discardedByRetirement }
            if waited >= timeout { return .timedOut }
        }
        return .started
    }

    /// Hook: the producers (and the source chaos thread) have finished. Invalidates every valid
    /// repeating timer while it fires, then waits for every one-shot still armed on a running loop
    /// to fire (a `performAndWait` round trip after each fire lets the loop finish the fire:
    /// invalidate the timer, or schedule it again when it was re-armed).
    func producersFinished(round: StressRound) {
        let (repeating, all) = registry.withLock { registry -> ([StressTimer], [StressTimer]) in
            defer { registry.repeating.removeAll(); registry.oneShots.removeAll() }
            return (registry.repeating, registry.all)
        }
        for timer in repeating where timer.timer.isValid { invalidateWhileFiring(timer, round: round) }
        for timer in all where !timer.repeats && timer.timer.isValid { waitUntilFiredOut(timer, round: round) }
        settled.store(true, ordering: .releasing)
    }

    private func waitUntilFiredOut(_ timer: StressTimer, round: StressRound) {
        round.sourceProgress.withLock { $0 = "round end: waiting for \(timer.label) to fire" }
        for _ in 0..<64 {
            let state = timer.records.state.snapshot
            if state.retired || state.invalidatedByEngine { return }
            // After this round trip, the loop has finished every fire counted in `state`.
            guard (try? timer.consumer.loop.performAndWait({})) != nil else { return }
            if !timer.timer.isValid { return }
            let before = state.fires.count
            if !timer.records.state.wait(seconds: timeout, until: { $0.fires.count > before || $0.retired }) {
                timer.records.state.update { $0.neverFiredReported = true }
                round.runtimeViolation("timers: \(timer.label) is still valid, armed for \(timer.timer.fireDate) "
                    + "(now \(Date())), but did not fire within \(timeout)s on a running loop (never fired)")
                return
            }
        }
        round.runtimeViolation("timers: \(timer.label) still valid after 64 fires (a one-shot that keeps firing)")
    }
}
