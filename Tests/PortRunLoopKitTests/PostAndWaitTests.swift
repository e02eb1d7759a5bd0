import Foundation
import PortRunLoopKit
import Synchronization
import Testing
import PortRunLoopTestSupport

/// `ThreadNotificationCenter.postAndWait`: completion, ordering, timeouts and the no-deadlock rule.
@Suite(.timeLimit(.minutes(2)))
struct PostAndWaitTests {
    /// Observers on the posting thread and on two others: all have handled the notification when
    /// the call returns.
    @Test func observersOnThePostingThreadAndTwoOthers() throws {
        let center = ThreadNotificationCenter()
        let poster = try RunLoopThread(name: "paw-poster")
        let a = try RunLoopThread(name: "paw-a")
        let b = try RunLoopThread(name: "paw-b")
        defer { poster.stop(); a.stop(); b.stop() }
        let log = NotifLog<String>()
        let tokens = [poster, a, b].map { thread in
            center.addObserver(forName: .notifTestA, on: thread.loop) { _ in log.append(notifThreadName) }
        }
        let (count, seen) = try poster.loop.performAndWait { () throws -> (Int, [String]) in
            let count = try center.postAndWait(name: .notifTestA)
            return (count, log.all)
        }
        #expect(count == 3)
        #expect(Set(seen) == ["paw-poster", "paw-a", "paw-b"])
        #expect(seen.count == 3)
        withExtendedLifetime(tokens) { }
    }

    /// The same from a thread that has no run loop at all.
    @Test func fromAThreadWithoutALoop() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "paw-noloop-a")
        let b = try RunLoopThread(name: "paw-noloop-b")
        defer { a.stop(); b.stop() }
        let log = NotifLog<String>()
        let tokens = [a, b].map { thread in
            center.addObserver(forName: .notifTestA, on: thread.loop) { _ in log.append(notifThreadName) }
        }
        let result = NotifBox<Result<Int, PortRunLoopError>?>(nil)
        let done = notifSpawn("paw-plain") {
            let r = Result { () throws(PortRunLoopError) -> Int in try center.postAndWait(name: .notifTestA) }
            let seen = log.count
            result.value = r.map { $0 * 10 + seen }
        }
        #expect(done.wait())
        #expect(try result.value?.get() == 22) // 2 handled, both before it returned
        withExtendedLifetime(tokens) { }
    }

    /// Two threads post-and-wait to each other at the same moment. Deterministic: B starts its own
    /// post-and-wait only once A's notification is already queued for B (so A is waiting), and B's
    /// loop is busy until then, so neither notification can be delivered outside the other's wait.
    @Test func twoThreadsPostAndWaitToEachOther() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "paw-cycle-a")
        let b = try RunLoopThread(name: "paw-cycle-b")
        defer { a.stop(); b.stop() }
        let log = NotifLog<String>()
        let toA = center.addObserver(forName: .notifTestA, on: a.loop) { _ in log.append("A handled toA") }
        let toB = center.addObserver(forName: .notifTestB, on: b.loop) { _ in log.append("B handled toB") }
        let queueB = center.queue(for: b.loop)
        let bResult = NotifBox<Result<Int, PortRunLoopError>?>(nil)
        let bDone = Signal()
        let bHeld = Signal()
        b.loop.perform {
            bHeld.fire()
            // Wait (bounded) until A's post is queued here: A is then inside postAndWait.
            let deadline = Date(timeIntervalSinceNow: 30)
            while queueB.metrics.depth == 0 && Date() < deadline { sched_yield() }
            let r = Result { () throws(PortRunLoopError) -> Int in try center.postAndWait(name: .notifTestA, timeout: .seconds(30)) }
            bResult.value = r
            bDone.fire()
        }
        #expect(bHeld.wait())
        let aCount = try a.loop.performAndWait { () throws -> Int in
            try center.postAndWait(name: .notifTestB, timeout: .seconds(30))
        }
        #expect(bDone.wait())
        #expect(aCount == 1)
        #expect(try bResult.value?.get() == 1)
        #expect(Set(log.all) == ["A handled toA", "B handled toB"])
        withExtendedLifetime((toA, toB)) { }
    }

    /// A post-and-wait to a thread that is blocked elsewhere times out, withdraws the delivery (it
    /// never happens later) and throws.
    @Test func timeoutWithdrawsTheDeliveryAndThrows() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "paw-timeout")
        defer { a.stop() }
        let got = NotifCountdown()
        let token = center.addObserver(forName: .notifTestA, on: a.loop) { _ in got.add() }
        let release = holdLoop(a)
        #expect(throws: PortRunLoopError.timedOut) {
            try center.postAndWait(name: .notifTestA, timeout: .milliseconds(50))
        }
        release.fire()
        try a.loop.performAndWait { }
        try a.loop.performAndWait { }
        #expect(got.value == 0)
        #expect(center.queue(for: a.loop).metrics.discarded == 1)
        withExtendedLifetime(token) { }
    }

    /// Everything a thread posted to an observer before its post-and-wait has been handled, in
    /// order, when the post-and-wait returns.
    @Test func keepsOrderWithEarlierAsynchronousPosts() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "paw-order")
        defer { a.stop() }
        let log = NotifLog<Int>()
        let token = center.addObserver(forName: .notifTestA, on: a.loop) { log.append($0.userInfo!["n"] as! Int) }
        for n in 0..<500 { center.post(name: .notifTestA, object: nil, userInfo: ["n": n]) }
        try center.postAndWait(name: .notifTestA, object: nil, userInfo: ["n": 500])
        #expect(log.all == Array(0...500))
        withExtendedLifetime(token) { }
    }

    /// The ordering rule also holds while the observer thread is itself waiting: it delivers the
    /// asynchronous posts queued ahead of a synchronous one first.
    @Test func aWaitingThreadDeliversQueuedPostsAheadOfASynchronousOne() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "paw-wait-order-a")
        let b = try RunLoopThread(name: "paw-wait-order-b")
        defer { a.stop(); b.stop() }
        let log = NotifLog<Int>()
        let tokenA = center.addObserver(forName: .notifTestA, on: a.loop) { log.append($0.userInfo!["n"] as! Int) }
        let gateOnB = Signal()
        let tokenB = center.addObserver(forName: .notifTestB, on: b.loop) { _ in _ = gateOnB.wait() }
        let aWaiting = Signal()
        let aDone = Signal()
        // A waits on B (whose handler blocks), so A sits in its synchronous wait.
        a.loop.perform {
            aWaiting.fire()
            _ = try? center.postAndWait(name: .notifTestB, timeout: .seconds(30))
            aDone.fire()
        }
        #expect(aWaiting.wait())
        for n in 0..<10 { center.post(name: .notifTestA, object: nil, userInfo: ["n": n]) }
        try center.postAndWait(name: .notifTestA, object: nil, userInfo: ["n": 10], timeout: .seconds(30))
        #expect(log.all == Array(0...10))
        gateOnB.fire()
        #expect(aDone.wait())
        withExtendedLifetime((tokenA, tokenB)) { }
    }

    @Test func aStoppedObserverThreadDoesNotHangTheWait() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "paw-dead")
        let got = NotifCountdown()
        let token = center.addObserver(forName: .notifTestA, on: a.loop) { _ in got.add() }
        a.stop()
        // Bounded: a wait that hung would throw `timedOut` and fail here.
        #expect(try center.postAndWait(name: .notifTestA, timeout: .seconds(5)) == 0)
        #expect(!token.isActive)
    }
}
