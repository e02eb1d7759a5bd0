import Foundation
import PortRunLoopKit
import PortRunLoopStressEngine
import Synchronization

/// Observer threads that come and go: one started every `every` seconds, each observing the
/// posters' notifications on its own loop (a center observation and a redirector) for about 2.5
/// of those periods, then ending in one of three ways, in turn:
///
/// - **stopped**: a `RunLoopThread` stopped with `stop()` — everything posted before the call must
///   have been delivered when it returns (H2);
/// - **exits**: a plain thread that runs its loop until a date and returns, so its loop is shut down
///   by the thread's exit — what was queued for it is discarded and counted (allowed drops:
///   `observer-ended`, `redirector-ended`);
/// - **removed**: the observation removed (`removeAndWait`) and the redirector invalidated, then the
///   thread stopped — no handler may start after those calls returned (§2.5).
///
/// Delivered numbers must be in order without gaps from the first post made once the observation
/// was in effect (``JoinedSequence``).
///
/// Thread-safety: the main thread (``start(load:)``, ``supervise(elapsed:load:)``, ``stop(load:)``).
final class ObserverThreads {
    private let ledger: SoakLedger
    private let every: Double
    private var live: [ObserverThread] = []
    private var ended: [(observer: ObserverThread, settleAt: Double)] = []
    private var started = 0
    private var lastStart = -Double.infinity
    private var elapsed = 0.0

    init(ledger: SoakLedger, every: Double) {
        self.ledger = ledger
        self.every = every
    }

    func start(load: NotificationLoad) {}

    func supervise(elapsed: Double, load: NotificationLoad) {
        self.elapsed = elapsed
        if elapsed - lastStart >= every {
            lastStart = elapsed
            do {
                live.append(try ObserverThread(id: started, kind: ObserverThread.Kind.allCases[started % 3],
                                               life: every * 2.5, load: load, ledger: ledger, now: elapsed))
                started += 1
                ledger.restarted("observer-threads")
            } catch {
                ledger.violation("observers: could not start an observer thread: \(error)")
            }
        }
        for observer in live where elapsed >= observer.endAt {
            observer.end(load: load)
            ended.append((observer, elapsed + 1))
        }
        live.removeAll { elapsed >= $0.endAt }
        for entry in ended where elapsed >= entry.settleAt { entry.observer.settle() }
        ended.removeAll { elapsed >= $0.settleAt }
    }

    func stop(load: NotificationLoad) {
        for observer in live { observer.end(load: load) }
        live.removeAll()
        for entry in ended { entry.observer.settle() }
        ended.removeAll()
    }
}

/// One observer thread (see ``ObserverThreads``).
///
/// Thread-safety: created, ended and settled on the main thread; its handlers on its own thread.
final class ObserverThread {
    enum Kind: CaseIterable { case stopped, exits, removed }

    let id: Int
    let kind: Kind
    let endAt: Double
    private let ledger: SoakLedger
    private var thread: RunLoopThread?
    private var plain: JoinableThread?
    private var observation: NotificationObservation?
    private var redirector: NotificationRedirector?
    private var queue: ThreadNotificationQueue?
    private let centerChecks: [JoinedSequence]
    private let redirectorChecks: [JoinedSequence]
    private let removed = StopFlag()

    init(id: Int, kind: Kind, life: Double, load: NotificationLoad, ledger: SoakLedger, now: Double) throws {
        self.id = id
        self.kind = kind
        self.ledger = ledger
        endAt = now + life
        centerChecks = (0..<load.posterCount).map { JoinedSequence("center: poster \($0) → observer thread \(id) (\(kind))", ledger: ledger) }
        redirectorChecks = (0..<load.posterCount).map { JoinedSequence("redirector: poster \($0) → observer thread \(id) (\(kind))", ledger: ledger) }
        let centerChecks = self.centerChecks
        let redirectorChecks = self.redirectorChecks
        let removed = self.removed
        let onNote: @Sendable (Notification, [JoinedSequence], String) -> Void = { note, checks, what in
            if removed.isRaised {
                ledger.violation("\(what): observer thread \(id) got a notification after its removal returned")
            }
            guard let (poster, sequence) = NotificationLoad.numbered(note), poster < checks.count else {
                return ledger.violation("\(what): observer thread \(id) got an unnumbered notification")
            }
            checks[poster].received(sequence)
        }
        let center = load.center
        let register: @Sendable (PortRunLoop) -> (NotificationObservation, NotificationRedirector, ThreadNotificationQueue) = { loop in
            let observation = center.addObserver(forName: NotificationLoad.noteName, on: loop) { onNote($0, centerChecks, "center") }
            let redirector = NotificationRedirector(loop: loop, queueLimit: 1) { onNote($0, redirectorChecks, "redirector") }
            return (observation, redirector, center.queue(for: loop))
        }
        if kind == .exits {
            let registered = Shared<(NotificationObservation, NotificationRedirector, ThreadNotificationQueue)?>(nil)
            let ready = DispatchSemaphore(value: 0)
            let until = Date(timeIntervalSinceNow: life)
            plain = JoinableThread(name: "soak-observer-\(id)") {
                let loop = PortRunLoop.current
                SoakLoops.track(loop, "soak-observer-\(id)")
                let parts = register(loop)
                registered.withLock { $0 = parts }
                ready.signal()
                loop.run(until: until)
            }
            guard ready.wait(timeout: .now() + 10) == .success, let parts = registered.withLock({ $0 }) else {
                throw ObserverThreadError.didNotStart
            }
            (observation, redirector, queue) = parts
        } else {
            let thread = try SoakLoops.thread("soak-observer-\(id)")
            self.thread = thread
            (observation, redirector, queue) = register(thread.loop)
        }
        load.liveRedirectors.withLock { $0.append(redirector!) }
        // A post under way while the observation began may have missed it; the next may not.
        for poster in 0..<load.posterCount {
            let mustFrom = UInt64(load.posted[poster].value + 1)
            centerChecks[poster].begin(mustFrom: mustFrom)
            redirectorChecks[poster].begin(mustFrom: mustFrom)
        }
    }

    /// Ends the thread its way and checks what was promised.
    func end(load: NotificationLoad) {
        switch kind {
        case .stopped:
            let promised = load.posted.map { UInt64($0.value) }
            thread?.stop()
            for (poster, check) in centerChecks.enumerated() { check.finish(promisedUpTo: promised[poster]) }
            for (poster, check) in redirectorChecks.enumerated() { check.finish(promisedUpTo: promised[poster]) }
        case .exits:
            if plain?.join(timeout: 30) == false { ledger.violation("observers: thread \(id) did not exit within 30 s of its date") }
            plain = nil
        case .removed:
            if observation?.removeAndWait(timeout: .seconds(10)) == false { ledger.violation("observers: thread \(id)'s removeAndWait timed out") }
            redirector?.invalidate()
            if redirector?.waitForRunningHandler(timeout: .seconds(10)) == false { ledger.violation("observers: thread \(id)'s redirector handler did not finish") }
            removed.raise()
            thread?.stop()
        }
        let redirector = self.redirector
        load.liveRedirectors.withLock { $0.removeAll { $0 === redirector } }
    }

    /// Counts what was discarded for it once nothing reaches it any more (allowed drops).
    func settle() {
        ledger.dropped("observer-ended", queue?.metrics.discarded ?? 0)
        ledger.dropped("redirector-ended", redirector?.discardedCount ?? 0)
        observation = nil
        redirector = nil
        queue = nil
        thread = nil
    }
}

enum ObserverThreadError: Error {
    case didNotStart
}
