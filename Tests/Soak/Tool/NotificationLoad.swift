import Foundation
import PortRunLoopKit
import Synchronization

/// The per-thread notification center, its queues, and redirectors.
///
/// - Two poster threads (no loop) post numbered notifications on a `ThreadNotificationCenter`;
///   every hub observes them (§2.2: first in, first out per poster per observation, exactly once
///   while observed), and each post also goes through every hub's `NotificationRedirector` (queue
///   limit 1: dropped doorbells lose nothing). Every 64th post of the first poster is a
///   `postAndWait`, which must come back having reached every hub's observer.
/// - Hub 0 enqueues numbered `.asap` posts (no coalescing) on its `ThreadNotificationQueue` every
///   5 ms, observed on hub 1 (each must arrive, in order), and a `.whenIdle` post coalesced on its
///   name (each either arrives or is counted as coalesced).
/// - Observer threads come and go (``ObserverThreads``).
///
/// Thread-safety: `@unchecked Sendable`: the ``SoakLoad`` members run on the main thread; the
/// load's threads, started at the end of ``start()``, read only what it set before.
final class NotificationLoad: SoakLoad, @unchecked Sendable {
    static let noteName = Notification.Name("soak.note")
    static let syncName = Notification.Name("soak.sync")
    static let queuedName = Notification.Name("soak.queued")
    static let idleName = Notification.Name("soak.idle")

    let name = "notifications"
    let center = ThreadNotificationCenter()
    let posterCount = 2
    /// Per poster: the number of posts that returned (the next post's number).
    let posted: [SoakCounter]
    /// The redirectors of observer threads that are alive: every post goes through them too.
    let liveRedirectors = TracedMutex<[NotificationRedirector]>([])
    private let hubs: SoakHubs
    private let ledger: SoakLedger
    private let stopFlag = StopFlag()
    private let rate: Double
    private var observations: [NotificationObservation] = []
    private var redirectors: [NotificationRedirector] = []
    private var centerChecks: [[SequenceCheck]] = []
    private var redirectorChecks: [[SequenceCheck]] = []
    private var queueCheck: SequenceCheck
    private let idleEnqueued = SoakCounter()
    private let idleDelivered = SoakCounter()
    private var coalescedSeen = 0
    private var queueTimer: RunLoopTimer?
    private var posters: [PacedThread] = []
    private let observerThreads: ObserverThreads

    init(hubs: SoakHubs, ledger: SoakLedger, rate: Double, churn: Double) {
        self.hubs = hubs
        self.ledger = ledger
        self.rate = rate
        posted = (0..<posterCount).map { _ in SoakCounter() }
        queueCheck = SequenceCheck("queue: hub 0's .asap posts → hub 1", ledger: ledger)
        observerThreads = ObserverThreads(ledger: ledger, every: churn)
    }

    func start() throws {
        let ledger = self.ledger
        centerChecks = (0..<posterCount).map { poster in
            (0..<hubs.count).map { SequenceCheck("center: poster \(poster) → hub \($0)", ledger: ledger) }
        }
        redirectorChecks = (0..<posterCount).map { poster in
            (0..<hubs.count).map { SequenceCheck("redirector: poster \(poster) → hub \($0)", ledger: ledger) }
        }
        for hub in 0..<hubs.count {
            let loop = hubs[hub]
            let checks = centerChecks.map { $0[hub] }
            observations.append(center.addObserver(forName: Self.noteName, on: loop) { note in
                guard let (poster, sequence) = Self.numbered(note), poster < checks.count else {
                    return ledger.violation("center: hub \(hub) got an unnumbered notification")
                }
                if !loop.isCurrentThread { ledger.violation("center: hub \(hub)'s observer ran off its thread") }
                checks[poster].received(sequence)
            })
            observations.append(center.addObserver(forName: Self.syncName, on: loop) { _ in })
            let redirected = redirectorChecks.map { $0[hub] }
            redirectors.append(NotificationRedirector(loop: loop, queueLimit: 1) { note in
                guard let (poster, sequence) = Self.numbered(note), poster < redirected.count else {
                    return ledger.violation("redirector: hub \(hub) got an unnumbered notification")
                }
                redirected[poster].received(sequence)
            })
        }
        let queueCheck = self.queueCheck
        observations.append(center.addObserver(forName: Self.queuedName, on: hubs[1]) { note in
            guard let (_, sequence) = Self.numbered(note) else { return ledger.violation("queue: an unnumbered notification") }
            queueCheck.received(sequence)
        })
        let idleDelivered = self.idleDelivered
        observations.append(center.addObserver(forName: Self.idleName, on: hubs[1]) { _ in idleDelivered.add() })
        startQueueTimer()
        for poster in 0..<posterCount {
            posters.append(PacedThread("soak-poster-\(poster)", perSecond: 400 * rate, stop: stopFlag) { [self] step in
                post(poster, step)
            })
        }
        observerThreads.start(load: self)
    }

    /// The poster index and number a soak notification carries.
    static func numbered(_ note: Notification) -> (Int, UInt64)? {
        guard let poster = note.object as? Int, let sequence = note.userInfo?["seq"] as? UInt64 else { return nil }
        return (poster, sequence)
    }

    private func startQueueTimer() {
        let loop = hubs[0]
        let queue = center.queue(for: loop)
        let queueCheck = self.queueCheck
        let idleEnqueued = self.idleEnqueued
        let timer = RunLoopTimer(fireAt: Date(), interval: 0.005, repeats: true) { _ in
            let sequence = queueCheck.next
            queue.enqueue(Notification(name: Self.queuedName, object: 0, userInfo: ["seq": sequence]),
                          postingStyle: .asap, coalesceMask: [], forModes: [.default])
            queueCheck.accepted()
            queue.enqueue(Notification(name: Self.idleName), postingStyle: .whenIdle, coalesceMask: .onName, forModes: [.default])
            idleEnqueued.add()
        }
        queueTimer = timer
        loop.add(timer, forMode: .common)
    }

    /// One post of poster `poster` (on its own thread).
    private func post(_ poster: Int, _ step: Int) {
        let sequence = UInt64(posted[poster].value)
        let note = Notification(name: Self.noteName, object: poster, userInfo: ["seq": sequence])
        center.post(note)
        for check in centerChecks[poster] { check.accepted() }
        for redirector in redirectors { redirector.process(note) }
        for check in redirectorChecks[poster] { check.accepted() }
        for redirector in liveRedirectors.withLock({ $0 }) { redirector.process(note) }
        posted[poster].add()
        guard poster == 0 && step % 64 == 63 else { return }
        ledger.sent()
        do {
            let calls = try center.postAndWait(name: Self.syncName, timeout: .seconds(10))
            if calls == hubs.count { ledger.delivered() } else { ledger.lost(1, "center: a postAndWait reached \(calls) of \(hubs.count) observers") }
        } catch {
            ledger.dropped("postAndWait-timed-out")
        }
    }

    func supervise(elapsed: Double) {
        observerThreads.supervise(elapsed: elapsed, load: self)
    }

    func report() {
        let coalesced = center.queue(for: hubs[0]).metrics.coalesced
        ledger.dropped("coalesced", coalesced - coalescedSeen)
        coalescedSeen = coalesced
    }

    func stop() {
        stopFlag.raise()
        for poster in posters where !poster.join() { ledger.violation("notifications: \(poster.name) did not stop within 60 s") }
        queueTimer?.invalidate()
        observerThreads.stop(load: self)
        let checks = centerChecks.flatMap { $0 } + redirectorChecks.flatMap { $0 } + [queueCheck]
        if !waitUntil(seconds: 10, { checks.allSatisfy { $0.outstanding == 0 } }) {
            ledger.note("notifications: deliveries still outstanding 10 s after the posters stopped")
        }
        for check in checks { check.finish() }
        // A `.whenIdle` post is delivered or coalesced; the last may still wait for an idle turn.
        waitUntil(seconds: 5) { idleDelivered.value + center.queue(for: hubs[0]).metrics.coalesced >= idleEnqueued.value }
        report()
        let missing = idleEnqueued.value - idleDelivered.value - coalescedSeen
        ledger.sent(idleDelivered.value + max(missing, 0))
        ledger.delivered(idleDelivered.value)
        ledger.lost(missing, "queue: \(missing) .whenIdle posts were neither posted nor coalesced")
        for observation in observations { observation.remove() }
        for redirector in redirectors { redirector.invalidate() }
    }
}
