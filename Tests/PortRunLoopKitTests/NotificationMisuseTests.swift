import Foundation
import PortRunLoopKit
import PortRunLoopStressEngine
import Synchronization
import Testing
import PortRunLoopTestSupport

/// Notification-center misuse: observers that post again re-entrantly, and removing
/// an observer twice (every form). The outcome is a documented behaviour — never a hang, a crash
/// or a lost or duplicated notification.
@Suite(.timeLimit(.minutes(1))) struct NotificationMisuseTests {
    static let ping = Notification.Name("misuse.ping")
    static let pong = Notification.Name("misuse.pong")

    @Test func anInlineObserverThatPostsTheSameNameRecursesInlineInOrder() throws {
        // Observers on the posting thread are called inline (Foundation's semantics), so a
        // re-entrant post recurses: depth-first, each level before the post that caused it returns.
        let log = try onLoopThread { c -> [String] in
            let center = ThreadNotificationCenter()
            var log: [String] = []
            let logBox = Locked<[String]>([])
            let token = center.addObserver(forName: Self.ping, object: nil) { note in
                let depth = note.userInfo?["depth"] as? Int ?? 0
                logBox.withLock { $0.append("begin \(depth)") }
                if depth < 3 { center.post(name: Self.ping, object: nil, userInfo: ["depth": depth + 1]) }
                logBox.withLock { $0.append("end \(depth)") }
            }
            center.post(name: Self.ping, object: nil, userInfo: ["depth": 0])
            log = logBox.withLock { $0 }
            c.expect(token.isActive)
            token.remove()
            return log
        }
        #expect(log == ["begin 0", "begin 1", "begin 2", "begin 3", "end 3", "end 2", "end 1", "end 0"])
    }

    @Test func observersOnTwoThreadsThatRepostToEachOtherPingPongInOrderAndStop() throws {
        // ping is observed on W1, whose handler posts pong; pong is observed on W2, whose handler
        // posts ping: every re-post crosses threads, so it is queued (never nested) and the chain
        // runs in order until the counter stops it — no recursion, no deadlock, nothing lost.
        let w1 = try RunLoopThread(name: "ping-side")
        let w2 = try RunLoopThread(name: "pong-side")
        defer { w1.stop(); w2.stop() }
        let center = ThreadNotificationCenter()
        let seen = Locked<[Int]>([])
        let wrongThread = CallCounter()
        let done = Signal()
        let pingToken = center.addObserver(forName: Self.ping, object: nil, on: w1.loop) { note in
            if !w1.loop.isCurrentThread { wrongThread.increment() }
            let n = note.userInfo?["n"] as? Int ?? -1
            seen.withLock { $0.append(n) }
            if n < 100 { center.post(name: Self.pong, object: nil, userInfo: ["n": n + 1]) } else { done.fire() }
        }
        let pongToken = center.addObserver(forName: Self.pong, object: nil, on: w2.loop) { note in
            if !w2.loop.isCurrentThread { wrongThread.increment() }
            let n = note.userInfo?["n"] as? Int ?? -1
            seen.withLock { $0.append(n) }
            center.post(name: Self.ping, object: nil, userInfo: ["n": n + 1])
        }
        center.post(name: Self.ping, object: nil, userInfo: ["n": 0])
        #expect(done.wait())
        #expect(seen.withLock { $0 } == Array(0...100))
        #expect(wrongThread.value == 0)
        pingToken.remove()
        pongToken.remove()
    }

    @Test func observersThatPostAndWaitBackToTheirPosterDoNotDeadlock() throws {
        // Thread A posts-and-waits "ping" to an observer on B, whose handler posts-and-waits "pong"
        // back to an observer on A — a cycle that the center resolves by its documented rule (A
        // keeps delivering synchronous posts while it waits). Nothing hangs; each runs once.
        let a = try RunLoopThread(name: "cycle-a")
        let b = try RunLoopThread(name: "cycle-b")
        defer { a.stop(); b.stop() }
        let center = ThreadNotificationCenter()
        let pongs = CallCounter()
        let pings = CallCounter()
        let pongToken = center.addObserver(forName: Self.pong, object: nil, on: a.loop) { _ in
            if a.loop.isCurrentThread { pongs.increment() }
        }
        let pingToken = center.addObserver(forName: Self.ping, object: nil, on: b.loop) { _ in
            pings.increment()
            _ = try? center.postAndWait(name: Self.pong, object: nil, timeout: .seconds(20))
        }
        let delivered = try a.loop.performAndWait {
            try center.postAndWait(name: Self.ping, object: nil, timeout: .seconds(20))
        }
        #expect(delivered == 1)
        #expect(pings.value == 1 && pongs.value == 1)
        pingToken.remove()
        pongToken.remove()
    }

    @Test func removingAnObservationTwiceInEveryFormIsANoOp() throws {
        let worker = try RunLoopThread(name: "remove-twice")
        defer { worker.stop() }
        let center = ThreadNotificationCenter()
        let calls = CallCounter()
        let token = center.addObserver(forName: Self.ping, object: nil, on: worker.loop) { _ in calls.increment() }
        #expect(center.observationCount == 1)
        token.remove()
        token.remove()
        center.removeObserver(token)
        #expect(token.removeAndWait(timeout: .seconds(5)))
        #expect(!token.isActive)
        #expect(center.observationCount == 0)
        center.post(name: Self.ping, object: nil)
        try worker.loop.performAndWait {}
        try worker.loop.performAndWait {}
        #expect(calls.value == 0)
    }

    @Test func removingAnObserverObjectTwiceAndThenItsTokenIsANoOp() throws {
        final class Observer: Sendable {
            let calls = CallCounter()
        }
        let worker = try RunLoopThread(name: "remove-object-twice")
        defer { worker.stop() }
        let center = ThreadNotificationCenter()
        let observer = Observer()
        let token = center.addObserver(observer, name: Self.ping, object: nil, on: worker.loop) { me, _ in me.calls.increment() }
        center.removeObserver(observer)
        center.removeObserver(observer)
        center.removeObserver(observer, name: Self.ping)
        token.remove()
        #expect(!token.isActive)
        center.post(name: Self.ping, object: nil)
        try worker.loop.performAndWait {}
        try worker.loop.performAndWait {}
        #expect(observer.calls.value == 0)
    }

    @Test func removingTwiceFromInsideTheHandlerStopsAtOnce() throws {
        let worker = try RunLoopThread(name: "remove-inside")
        defer { worker.stop() }
        let center = ThreadNotificationCenter()
        let calls = CallCounter()
        let tokenBox = Locked<NotificationObservation?>(nil)
        let waitedAtOnce = Locked<Bool?>(nil)
        let token = center.addObserver(forName: Self.ping, object: nil, on: worker.loop) { _ in
            calls.increment()
            let token = tokenBox.withLock { $0 }
            token?.remove()
            token?.remove()
            // From inside its own handler, waiting for running handlers returns at once.
            waitedAtOnce.withLock { $0 = token?.waitForRunningHandlers(timeout: .seconds(5)) }
        }
        tokenBox.withLock { $0 = token }
        // Queue several before the first is handled: only the first may run.
        let release = holdLoop(worker)
        for _ in 0..<5 { center.post(name: Self.ping, object: nil) }
        release.fire()
        try worker.loop.performAndWait {}
        try worker.loop.performAndWait {}
        #expect(calls.value == 1)
        #expect(waitedAtOnce.withLock { $0 } == true)
        tokenBox.withLock { $0 = nil }
    }
}
