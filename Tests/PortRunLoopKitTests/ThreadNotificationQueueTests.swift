import Foundation
import PortRunLoopKit
import Synchronization
import Testing

/// `ThreadNotificationQueue`'s NotificationQueue API: posting styles, coalescing, FIFO order.
@Suite(.timeLimit(.minutes(2)))
struct ThreadNotificationQueueTests {
    /// A thread with a center observer on it that logs every notification's "n".
    struct Fixture {
        let center = ThreadNotificationCenter()
        let thread: RunLoopThread
        let log = NotifLog<String>()
        let count = NotifCountdown()
        let token: NotificationObservation
        var queue: ThreadNotificationQueue { center.queue(for: thread.loop) }

        init(_ name: String) throws {
            thread = try RunLoopThread(name: name)
            let log = self.log, count = self.count
            token = center.addObserver(forName: nil, on: thread.loop) { note in
                log.append(note.userInfo?["n"] as? String ?? note.name.rawValue)
                count.add()
            }
        }

        /// Runs `body` on the thread (where the queue may be used).
        func onThread<T: Sendable>(_ body: @Sendable () throws -> T) throws -> T {
            try thread.loop.performAndWait(body)
        }

        func note(_ n: String, name: Notification.Name = .notifTestA, object: Any? = nil) -> Notification {
            Notification(name: name, object: object, userInfo: ["n": n])
        }
    }

    @Test func nowPostsBeforeReturning() throws {
        let f = try Fixture("tnq-now")
        defer { f.thread.stop() }
        let seen = try f.onThread { () -> [String] in
            f.queue.enqueue(f.note("1"), postingStyle: .now)
            return f.log.all
        }
        #expect(seen == ["1"])
    }

    @Test func asapPostsOnTheNextTurnInOrder() throws {
        let f = try Fixture("tnq-asap")
        defer { f.thread.stop() }
        let seenAtEnqueue = try f.onThread { () -> [String] in
            for n in ["1", "2", "3"] { f.queue.enqueue(f.note(n, name: Notification.Name("asap-\(n)")), postingStyle: .asap) }
            return f.log.all
        }
        #expect(seenAtEnqueue == [])
        #expect(f.count.wait(for: 3))
        #expect(f.log.all == ["1", "2", "3"])
    }

    /// corelibs' NotificationQueue posts last in, first out; this one posts first in, first out.
    @Test func whenIdlePostsWhenTheLoopIsAboutToSleepFirstInFirstOut() throws {
        let f = try Fixture("tnq-idle")
        defer { f.thread.stop() }
        let seenAtEnqueue = try f.onThread { () -> [String] in
            for n in 1...5 { f.queue.enqueue(f.note("idle-\(n)"), postingStyle: .whenIdle, coalesceMask: []) }
            f.queue.enqueue(f.note("asap"), postingStyle: .asap, coalesceMask: [])
            return f.log.all
        }
        #expect(seenAtEnqueue == [])
        #expect(f.count.wait(for: 6))
        #expect(f.log.all == ["asap", "idle-1", "idle-2", "idle-3", "idle-4", "idle-5"])
    }

    /// Idle posts wait while the loop has work, and go out when it runs out.
    @Test func whenIdleWaitsForTheLoopToRunOutOfWork() throws {
        let f = try Fixture("tnq-busy")
        defer { f.thread.stop() }
        let loop = f.thread.loop
        let chain = NotifCountdown()
        let seenDuringWork = NotifBox<[String]>([])
        try f.onThread {
            f.queue.enqueue(f.note("idle"), postingStyle: .whenIdle)
            // A chain of 50 performs, each queuing the next: the loop is never idle meanwhile.
            @Sendable func step(_ k: Int) {
                chain.add()
                if k < 50 { loop.perform { step(k + 1) } } else { seenDuringWork.value = f.log.all }
            }
            loop.perform { step(1) }
        }
        #expect(f.count.wait(for: 1))
        #expect(chain.value == 50)
        #expect(seenDuringWork.value == [])
        #expect(f.log.all == ["idle"])
    }

    @Test func coalescingOnNameKeepsTheQueuedOne() throws {
        let f = try Fixture("tnq-coalesce-name")
        defer { f.thread.stop() }
        try f.onThread {
            for n in 1...5 { f.queue.enqueue(f.note("\(n)", object: "sender-\(n)"), postingStyle: .asap, coalesceMask: .onName) }
        }
        try f.center.postAndWait(name: .notifTestB, object: nil, userInfo: ["n": "flush"]) // inline? no: posted from here
        #expect(f.count.wait(for: 2))
        #expect(f.log.all == ["1", "flush"])
        #expect(f.queue.metrics.coalesced == 4)
    }

    @Test func coalescingOnSenderUsesIdentityAndEquality() throws {
        let f = try Fixture("tnq-coalesce-sender")
        defer { f.thread.stop() }
        final class Doc: @unchecked Sendable {}
        let doc = Doc()
        try f.onThread {
            let q = f.queue
            q.enqueue(f.note("doc", object: doc), postingStyle: .whenIdle, coalesceMask: .onSender)
            q.enqueue(f.note("doc-again", name: .notifTestB, object: doc), postingStyle: .whenIdle, coalesceMask: .onSender)
            q.enqueue(f.note("other-doc", object: Doc()), postingStyle: .whenIdle, coalesceMask: .onSender)
            q.enqueue(f.note("value", object: 7), postingStyle: .whenIdle, coalesceMask: .onSender)
            q.enqueue(f.note("value-again", object: 7), postingStyle: .whenIdle, coalesceMask: .onSender)
            q.enqueue(f.note("nil-1"), postingStyle: .whenIdle, coalesceMask: [.onName, .onSender])
            q.enqueue(f.note("nil-2"), postingStyle: .whenIdle, coalesceMask: [.onName, .onSender])
        }
        #expect(f.count.wait(for: 4))
        try f.onThread { }
        #expect(f.log.all == ["doc", "other-doc", "value", "nil-1"])
        #expect(f.queue.metrics.coalesced == 3)
    }

    /// Apple's rules: .now removes every matching pending post; .asap removes matching idle ones.
    @Test func moreUrgentStylesSupersedeQueuedOnes() throws {
        let f = try Fixture("tnq-urgent")
        defer { f.thread.stop() }
        let seenAtNow = try f.onThread { () -> [String] in
            f.queue.enqueue(f.note("idle"), postingStyle: .whenIdle)
            f.queue.enqueue(f.note("asap"), postingStyle: .asap)   // removes "idle"
            f.queue.enqueue(f.note("now"), postingStyle: .now)     // removes "asap", posts
            return f.log.all
        }
        #expect(seenAtNow == ["now"])
        try f.onThread { }
        try f.onThread { }
        #expect(f.log.all == ["now"])
        let m = f.queue.metrics
        #expect(m.coalesced == 2)
        #expect(m.depth == 0)
    }

    @Test func anEmptyMaskNeverCoalesces() throws {
        let f = try Fixture("tnq-nomask")
        defer { f.thread.stop() }
        try f.onThread {
            for n in 1...4 { f.queue.enqueue(f.note("\(n)"), postingStyle: .asap, coalesceMask: []) }
        }
        #expect(f.count.wait(for: 4))
        #expect(f.log.all == ["1", "2", "3", "4"])
        #expect(f.queue.metrics.coalesced == 0)
    }

    @Test func dequeueRemovesMatchingPendingPosts() throws {
        let f = try Fixture("tnq-dequeue")
        defer { f.thread.stop() }
        try f.onThread {
            f.queue.enqueue(f.note("a1"), postingStyle: .whenIdle, coalesceMask: [])
            f.queue.enqueue(f.note("b1", name: .notifTestB), postingStyle: .asap, coalesceMask: [])
            f.queue.enqueue(f.note("a2"), postingStyle: .asap, coalesceMask: [])
            f.queue.dequeueNotifications(matching: Notification(name: .notifTestA), coalesceMask: .onName)
        }
        #expect(f.count.wait(for: 1))
        try f.onThread { }
        #expect(f.log.all == ["b1"])
        #expect(f.queue.metrics.discarded == 2)
    }

    /// Posts wait for a run in one of their modes.
    @Test func pendingPostsWaitForTheirModes() throws {
        let f = try Fixture("tnq-modes")
        defer { f.thread.stop() }
        let custom = RunLoop.Mode("tnq.custom")
        let loop = f.thread.loop
        let keepCustomAlive = MessagePort()
        loop.add(keepCustomAlive, forMode: custom)
        let stopper = f.center.addObserver(forName: .notifTestA, on: loop) { note in
            if note.userInfo?["n"] as? String == "idle" { loop.stop() }
        }
        let ran = try f.onThread { () -> [String] in
            f.queue.enqueue(f.note("asap"), postingStyle: .asap, coalesceMask: [], forModes: [custom])
            f.queue.enqueue(f.note("idle"), postingStyle: .whenIdle, coalesceMask: [], forModes: [custom])
            loop.run(mode: .default, before: Date()) // a default-mode turn: nothing for it
            let before = f.log.all
            // Posts "asap" on its first turn, "idle" when about to sleep; the stopper ends the run.
            let result = loop.run(mode: custom, timeout: 30, returnAfterSourceHandled: false)
            return before + ["|"] + f.log.all + ["\(result)"]
        }
        #expect(ran == ["|", "asap", "idle", "stopped"])
        withExtendedLifetime(stopper) { }
    }

    /// Pending posts of a loop that shuts down are discarded and counted.
    @Test func pendingPostsAreDiscardedWhenTheLoopShutsDown() throws {
        let f = try Fixture("tnq-shutdown")
        let never = RunLoop.Mode("tnq.never")
        try f.onThread {
            f.queue.enqueue(f.note("asap"), postingStyle: .asap, coalesceMask: [], forModes: [never])
            f.queue.enqueue(f.note("idle"), postingStyle: .whenIdle, coalesceMask: [], forModes: [never])
        }
        let queue = f.queue // the center lets go of it as the loop shuts down
        #expect(queue.metrics.depth == 2)
        f.thread.stop()
        let m = queue.metrics
        #expect(m.depth == 0)
        #expect(m.discarded == 2)
        #expect(f.log.all == [])
    }

    @Test func enqueueOffTheQueuesThreadIsAProgrammerError() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = try RunLoopThread(name: "tnq-misuse")
            ThreadNotificationCenter.default.queue(for: thread.loop)
                .enqueue(Notification(name: .notifTestA), postingStyle: .asap)
        }
        #expect(notifStandardError(result).contains("ThreadNotificationQueue.enqueue"))
    }

    @Test func currentIsTheDefaultCentersQueueForTheCallingThread() throws {
        let thread = try RunLoopThread(name: "tnq-current")
        defer { thread.stop() }
        let same = try thread.loop.performAndWait {
            ThreadNotificationQueue.current === ThreadNotificationCenter.default.queue(for: thread.loop)
        }
        #expect(same)
    }
}
