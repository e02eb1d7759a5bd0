import Foundation
import PortRunLoopKit
import Synchronization
import Testing
import PortRunLoopTestSupport

/// The removal guarantee (the teardown race): once removal returns, the handler never starts again,
/// including for notifications already queued for its thread.
@Suite(.timeLimit(.minutes(3)))
struct CenterRemovalTests {
    @Test func queuedNotificationsAreNotDeliveredAfterRemove() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "rm-queued")
        defer { a.stop() }
        let got = NotifCountdown()
        let token = center.addObserver(forName: .notifTestA, on: a.loop) { _ in got.add() }
        let release = holdLoop(a)
        for _ in 0..<100 { center.post(name: .notifTestA) }
        #expect(center.queue(for: a.loop).metrics.depth == 100)
        token.remove()
        #expect(!token.isActive)
        release.fire()
        try a.loop.performAndWait { }
        try a.loop.performAndWait { }
        #expect(got.value == 0)
        let metrics = center.queue(for: a.loop).metrics
        #expect(metrics.discarded == 100)
        #expect(metrics.depth == 0)
    }

    @Test func releasingTheTokenEndsTheObservation() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "rm-token")
        defer { a.stop() }
        let got = NotifCountdown()
        var token: NotificationObservation? = center.addObserver(forName: .notifTestA, on: a.loop) { _ in got.add() }
        let release = holdLoop(a)
        for _ in 0..<10 { center.post(name: .notifTestA) }
        token = nil
        release.fire()
        // Two barriers (a post with no observer left would not wait for the queued deliveries).
        try a.loop.performAndWait { }
        try a.loop.performAndWait { }
        #expect(got.value == 0)
        #expect(center.observationCount == 0)
        #expect(center.queue(for: a.loop).metrics.discarded == 10)
        _ = token
    }

    final class Observer: @unchecked Sendable {
        let handled: NotifCountdown
        let deinits: NotifCountdown?
        init(handled: NotifCountdown, deinits: NotifCountdown? = nil) {
            self.handled = handled
            self.deinits = deinits
        }
        func handle(_ note: Notification) { handled.add() }
        deinit { deinits?.add() }
    }

    @Test func theObserverGoingAwayEndsTheObservation() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "rm-observer")
        defer { a.stop() }
        let handled = NotifCountdown()
        let deinits = NotifCountdown()
        var observer: Observer? = Observer(handled: handled, deinits: deinits)
        let token = center.addObserver(observer!, name: .notifTestA, on: a.loop) { me, note in me.handle(note) }
        try center.postAndWait(name: .notifTestA)
        #expect(handled.value == 1)
        let release = holdLoop(a)
        for _ in 0..<10 { center.post(name: .notifTestA) }
        observer = nil // deinit runs here, on this thread: nothing holds it
        #expect(deinits.value == 1)
        release.fire()
        try center.postAndWait(name: .notifTestA)
        #expect(handled.value == 1)
        #expect(!token.isActive)
    }

    final class SelfRemovingObserver: @unchecked Sendable {
        let center: ThreadNotificationCenter
        let handled = NotifCountdown()
        var token: NotificationObservation?
        init(center: ThreadNotificationCenter, loop: PortRunLoop) {
            self.center = center
            token = center.addObserver(self, name: .notifTestA, on: loop) { me, _ in me.handled.add() }
        }
        deinit { center.removeObserver(self) } // the Foundation idiom
    }

    @Test func removeObserverFromDeinitLikeFoundationCode() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "rm-deinit")
        defer { a.stop() }
        var observer: SelfRemovingObserver? = SelfRemovingObserver(center: center, loop: a.loop)
        let handled = observer!.handled
        try center.postAndWait(name: .notifTestA)
        #expect(handled.value == 1)
        let release = holdLoop(a)
        center.post(name: .notifTestA)
        observer = nil
        #expect(center.observationCount == 0)
        release.fire()
        try a.loop.performAndWait { }
        try a.loop.performAndWait { }
        #expect(handled.value == 1)
        #expect(center.queue(for: a.loop).metrics.discarded == 1)
    }

    /// A handler already running when removal returns runs to completion; the token can wait for it.
    @Test func aRunningHandlerFinishesAndCanBeWaitedFor() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "rm-running")
        defer { a.stop() }
        let entered = Signal()
        let proceed = Signal()
        let finished = NotifCountdown()
        let token = center.addObserver(forName: .notifTestA, on: a.loop) { _ in
            entered.fire()
            _ = proceed.wait()
            finished.add()
        }
        center.post(name: .notifTestA)
        center.post(name: .notifTestA) // queued behind the running one: must never start
        #expect(entered.wait())
        token.remove() // returns at once, while the handler is still running
        #expect(finished.value == 0)
        #expect(token.waitForRunningHandlers(timeout: .milliseconds(20)) == false)
        proceed.fire()
        #expect(token.waitForRunningHandlers(timeout: .seconds(30)))
        #expect(finished.value == 1)
        try a.loop.performAndWait { }
        try a.loop.performAndWait { }
        #expect(finished.value == 1)
        #expect(center.queue(for: a.loop).metrics.discarded == 1)
    }

    @Test func removingFromInsideTheHandler() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "rm-inside")
        defer { a.stop() }
        let calls = NotifCountdown()
        let waitedAtOnce = NotifCountdown()
        let tokenHolder = TokenHolder()
        tokenHolder.token = center.addObserver(forName: .notifTestA, on: a.loop) { _ in
            calls.add()
            let token = tokenHolder.token!
            token.remove()
            if token.waitForRunningHandlers() { waitedAtOnce.add() } // own thread: returns at once
        }
        let release = holdLoop(a)
        for _ in 0..<5 { center.post(name: .notifTestA) }
        release.fire()
        try center.postAndWait(name: .notifTestB)
        try a.loop.performAndWait { }
        #expect(calls.value == 1)
        #expect(waitedAtOnce.value == 1)
    }

    final class TokenHolder: @unchecked Sendable {
        var token: NotificationObservation? // written before any post; read on the loop thread after
    }

    /// Shared by one race iteration's observer and its handler calls.
    final class RaceFlags: Sendable {
        /// Set once removal returned and running handlers were waited for.
        let removed = Atomic<Bool>(false)
        /// Set by the observer's deinit.
        let deinitRan = Atomic<Bool>(false)
    }

    final class RaceObserver: @unchecked Sendable {
        let flags: RaceFlags
        let violations: NotifCountdown
        let calls: NotifCountdown
        var value = 0 // touched on the observer thread only
        init(flags: RaceFlags, violations: NotifCountdown, calls: NotifCountdown) {
            self.flags = flags
            self.violations = violations
            self.calls = calls
        }
        func handle() {
            if flags.removed.load(ordering: .sequentiallyConsistent) { violations.add() }
            if flags.deinitRan.load(ordering: .sequentiallyConsistent) { violations.add() }
            value = 10 // the article's `self.i = 10`, which crashed there
            calls.add()
        }
        deinit { flags.deinitRan.store(true, ordering: .sequentiallyConsistent) }
    }

    /// The teardown race, 10,000 times: an observer is dropped on one thread while another thread
    /// posts continuously. Five ways to end it rotate: the observer object deallocated, the token
    /// released, `removeObserver(token)`, `token.remove()`, `removeObserver(observer)`. No crash, no
    /// handler call with a deallocated observer, and once removal returned (and a handler already
    /// running was waited for), no handler of that observer ever starts.
    @Test func teardownRaceTenThousandTimes() throws {
        let iterations = 10_000
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "rm-race-obs")
        defer { a.stop() }
        let queue = center.queue(for: a.loop)
        let violations = NotifCountdown()
        let calls = NotifCountdown()
        let stop = NotifBox(false)
        let posts = NotifCountdown()
        let posterDone = notifSpawn("rm-race-poster") {
            while !stop.value {
                if queue.metrics.depth > 256 { sched_yield(); continue } // keep the queue bounded
                center.post(name: .notifTestA)
                posts.add()
            }
        }
        var observedBeforeRemoval = 0
        for i in 0..<iterations {
            let flags = RaceFlags()
            let before = calls.value
            var observer: RaceObserver? = RaceObserver(flags: flags, violations: violations, calls: calls)
            var token: NotificationObservation?
            switch i % 5 {
            case 0, 4:
                token = center.addObserver(observer!, name: .notifTestA, on: a.loop) { me, _ in me.handle() }
            default:
                let strong = observer!
                token = center.addObserver(forName: .notifTestA, on: a.loop) { _ in strong.handle() }
            }
            // Every 4th observer first receives at least one notification (bounded wait), so that
            // many removals happen while notifications are flowing to a live observer; the others
            // are removed at once, racing the poster's first deliveries to them.
            if i % 4 == 0, calls.wait(for: before + 1, seconds: 5) { observedBeforeRemoval += 1 }
            switch i % 5 {
            case 0: // the observer goes away (its deinit may run on the observer thread, after a handler)
                observer = nil
                try a.loop.performAndWait { } // a handler running at that moment has finished
            case 1: // the token is released
                token = nil
                try a.loop.performAndWait { }
            case 2:
                center.removeObserver(token!)
                #expect(token!.waitForRunningHandlers(timeout: .seconds(10)))
            case 3:
                token!.remove()
                #expect(token!.waitForRunningHandlers(timeout: .seconds(10)))
            default:
                center.removeObserver(observer!)
                token!.waitForRunningHandlers()
            }
            flags.removed.store(true, ordering: .sequentiallyConsistent)
            if i % 5 != 0 { observer = nil }
            _ = token
        }
        stop.value = true
        #expect(posterDone.wait(seconds: 60))
        try center.postAndWait(name: .notifTestB)
        try a.loop.performAndWait { }
        #expect(violations.value == 0)
        #expect(center.observationCount == 0)
        #expect(observedBeforeRemoval > iterations / 8, "observers were rarely live when removed: the race tested little")
        print("teardown race: \(iterations) observers removed during \(posts.value) posts (\(observedBeforeRemoval) after a delivery), \(calls.value) handler calls; \(queue.metrics)")
    }

    /// A thread that shuts down ends its observations and discards what was queued for it.
    @Test func aShutDownThreadDiscardsItsQueue() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "rm-shutdown")
        let never = RunLoop.Mode("rm.never")
        let got = NotifCountdown()
        let token = center.addObserver(forName: .notifTestA, on: a.loop, inModes: [never]) { _ in got.add() }
        for _ in 0..<7 { center.post(name: .notifTestA) }
        let queue = center.queue(for: a.loop)
        #expect(queue.metrics.depth == 7)
        a.stop()
        #expect(queue.metrics.depth == 0)
        #expect(queue.metrics.discarded == 7)
        center.post(name: .notifTestA) // finds the lane dead: ends the observation
        #expect(!token.isActive)
        #expect(got.value == 0)
    }

    /// The loop's shutdown ends an observation (§2.5) as seen from its token and the center's count
    /// at once, before any post reaches it.
    @Test func aLoopThatShutsDownEndsItsObservationsAsSeenAtOnce() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "rm-shutdown-seen")
        let token = center.addObserver(forName: .notifTestA, on: a.loop) { _ in }
        #expect(token.isActive)
        #expect(center.observationCount == 1)
        a.stop()
        #expect(!token.isActive)
        #expect(center.observationCount == 0)
    }
}
