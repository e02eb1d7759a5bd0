import Foundation
import PortRunLoopKit
import Synchronization

/// Timers, one-shot and repeating.
///
/// - A thread adds one-shot timers, due in 1–20 ms, to the hubs' loops from its own thread (T1:
///   each fires once, never early); every fifth it invalidates again at once (it may have fired:
///   either way nothing is checked of it). A one-shot still unfired 10 s after its date is lost.
/// - Each hub has a 10 ms repeating timer, replaced every 5 s (invalidated from the main thread,
///   a new one added): each must fire between two reports (a second or more apart).
///
/// Thread-safety: `@unchecked Sendable`: the ``SoakLoad`` members run on the main thread; the
/// load's threads, started at the end of ``start()``, read only what it set before.
final class TimerLoad: SoakLoad, @unchecked Sendable {
    let name = "timers"
    private let hubs: SoakHubs
    private let ledger: SoakLedger
    private let stopFlag = StopFlag()
    private let rate: Double
    /// Checked one-shots not fired yet, and their dates.
    private let pending = Shared<[UInt64: Date]>([:])
    private var maker: PacedThread?
    private var repeating: [RunLoopTimer] = []
    private let repeatingFires: [SoakCounter]
    private var lastReplaced = 0.0
    private var lastLook = ContinuousClock.now

    init(hubs: SoakHubs, ledger: SoakLedger, rate: Double) {
        self.hubs = hubs
        self.ledger = ledger
        self.rate = rate
        repeatingFires = (0..<hubs.count).map { _ in SoakCounter() }
    }

    func start() throws {
        for hub in 0..<hubs.count { repeating.append(addRepeating(hub)) }
        maker = PacedThread("soak-timer-maker", perSecond: 150 * rate, stop: stopFlag) { [self] step in
            makeOneShot(step)
        }
    }

    private func addRepeating(_ hub: Int) -> RunLoopTimer {
        let loop = hubs[hub]
        let ledger = self.ledger
        let fires = repeatingFires[hub]
        let timer = RunLoopTimer(fireAt: Date(timeIntervalSinceNow: 0.01), interval: 0.01, repeats: true) { _ in
            if !loop.isCurrentThread { ledger.violation("timers: hub \(hub)'s repeating timer fired off its thread") }
            fires.add()
        }
        loop.add(timer, forMode: .common)
        return timer
    }

    private func makeOneShot(_ step: Int) {
        let id = UInt64(step)
        let due = Date(timeIntervalSinceNow: Double(1 + step % 20) / 1000)
        let loop = hubs[step % hubs.count]
        let ledger = self.ledger
        let pending = self.pending
        guard step % 5 != 4 else {
            // Invalidated at once from this thread: it may fire before that or not; not checked.
            let timer = RunLoopTimer(fireAt: due) { _ in }
            loop.add(timer, forMode: .common)
            timer.invalidate()
            return
        }
        pending.withLock { $0[id] = due }
        ledger.sent()
        let timer = RunLoopTimer(fireAt: due) { _ in
            let now = Date()
            guard let due = pending.withLock({ $0.removeValue(forKey: id) }) else {
                return ledger.violation("timers: one-shot \(id) fired twice, or after it was given up as lost")
            }
            if now < due { ledger.violation("timers: one-shot \(id) fired \(due.timeIntervalSince(now) * 1000) ms early") }
            if !loop.isCurrentThread { ledger.violation("timers: one-shot \(id) fired off its loop's thread") }
            ledger.delivered()
        }
        loop.add(timer, forMode: .common)
    }

    func supervise(elapsed: Double) {
        if elapsed - lastReplaced >= 5 {
            lastReplaced = elapsed
            for hub in 0..<hubs.count {
                repeating[hub].invalidate()
                repeating[hub] = addRepeating(hub)
            }
            ledger.restarted("repeating-timers", hubs.count)
        }
        // One-shots 10 s past their date never fired: lost.
        let limit = Date(timeIntervalSinceNow: -10)
        let overdue = pending.withLock { entries -> [UInt64] in
            let ids = entries.filter { $0.value < limit }.map(\.key)
            for id in ids { entries.removeValue(forKey: id) }
            return ids
        }
        if !overdue.isEmpty { ledger.lost(overdue.count, "timers: one-shots \(overdue.prefix(5)) did not fire within 10 s of their date") }
    }

    /// Each hub's repeating timer fired since the last look (looks at least a second apart).
    func report() {
        guard ContinuousClock.now - lastLook >= .seconds(1) else { return }
        lastLook = .now
        for hub in 0..<hubs.count where repeatingFires[hub].take() == 0 {
            ledger.violation("timers: hub \(hub)'s repeating timer did not fire for a second or more")
        }
    }

    func stop() {
        stopFlag.raise()
        if let maker, !maker.join() { ledger.violation("timers: the one-shot maker did not stop within 60 s") }
        for timer in repeating { timer.invalidate() }
        waitUntil(seconds: 10) { pending.withLock { $0.isEmpty } }
        let unfired = pending.withLock { entries -> Int in
            defer { entries.removeAll() }
            return entries.count
        }
        ledger.lost(unfired, "timers: \(unfired) one-shots never fired")
    }
}
