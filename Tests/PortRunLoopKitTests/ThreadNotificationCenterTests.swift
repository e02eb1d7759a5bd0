import Foundation
import PortRunLoopKit
import Synchronization
import Testing
import PortRunLoopTestSupport

/// `ThreadNotificationCenter`: matching, thread targeting, inline semantics, ordering, modes and
/// batching.
@Suite(.timeLimit(.minutes(2)))
struct ThreadNotificationCenterTests {
    @Test func deliversOnTheObserversThread() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "tnc-a")
        defer { a.stop() }
        let log = NotifLog<String>()
        let done = NotifCountdown()
        let token = center.addObserver(forName: .notifTestA, on: a.loop) { _ in
            log.append(notifThreadName)
            done.add()
        }
        center.post(name: .notifTestA)
        #expect(done.wait(for: 1))
        #expect(log.all == ["tnc-a"])
        #expect(token.isActive)
    }

    @Test func filtersByNameAndObservesEveryName() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "tnc-names")
        defer { a.stop() }
        let named = NotifLog<String>()
        let every = NotifLog<String>()
        let t1 = center.addObserver(forName: .notifTestA, on: a.loop) { named.append($0.name.rawValue) }
        let t2 = center.addObserver(forName: nil, on: a.loop) { every.append($0.name.rawValue) }
        center.post(name: .notifTestA)
        center.post(name: .notifTestB)
        try center.postAndWait(name: .notifTestC)
        #expect(named.all == [Notification.Name.notifTestA.rawValue])
        #expect(every.all == [Notification.Name.notifTestA, .notifTestB, .notifTestC].map(\.rawValue))
        withExtendedLifetime((t1, t2)) { }
    }

    final class Sender: Hashable, @unchecked Sendable {
        let id: Int
        init(_ id: Int) { self.id = id }
        // Every Sender is "equal": matching must still be by identity.
        static func == (lhs: Sender, rhs: Sender) -> Bool { true }
        func hash(into hasher: inout Hasher) {}
    }

    @Test func matchesObjectSendersByIdentity() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "tnc-ident")
        defer { a.stop() }
        let mine = Sender(1)
        let other = Sender(2)
        let got = NotifLog<Int>()
        let token = center.addObserver(forName: .notifTestA, object: mine, on: a.loop) { note in
            got.append((note.object as! Sender).id)
        }
        center.post(name: .notifTestA, object: other)
        center.post(name: .notifTestA, object: nil)
        center.post(name: .notifTestA, object: mine)
        try center.postAndWait(name: .notifTestB)
        try a.loop.performAndWait { }
        #expect(got.all == [1])
        withExtendedLifetime(token) { }
    }

    struct Point: Hashable { var x: Int; var y: Int }

    /// corelibs' center never matches a value-type sender; this one matches by equality.
    @Test func matchesValueTypeSendersByEquality() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "tnc-values")
        defer { a.stop() }
        let strings = NotifLog<String>()
        let points = NotifLog<Point>()
        let ints = NotifLog<Int>()
        let t1 = center.addObserver(forName: .notifTestA, object: "window-1", on: a.loop) { strings.append($0.object as! String) }
        let t2 = center.addObserver(forName: .notifTestA, object: Point(x: 1, y: 2), on: a.loop) { points.append($0.object as! Point) }
        let t3 = center.addObserver(forName: .notifTestA, object: 42, on: a.loop) { ints.append($0.object as! Int) }
        for sender: Any in ["window-1", "window-2", Point(x: 1, y: 2), Point(x: 2, y: 1), 42, 43, "window-1"] {
            center.post(name: .notifTestA, object: sender)
        }
        try a.loop.performAndWait { } // two turns: every drain queued before has run
        try a.loop.performAndWait { }
        #expect(strings.all == ["window-1", "window-1"])
        #expect(points.all == [Point(x: 1, y: 2)])
        #expect(ints.all == [42])
        withExtendedLifetime((t1, t2, t3)) { }
    }

    @Test func anObjectFilterWhoseObjectIsGoneMatchesNothing() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "tnc-goneobj")
        defer { a.stop() }
        let count = NotifCountdown()
        var sender: Sender? = Sender(7)
        let token = center.addObserver(forName: .notifTestA, object: sender, on: a.loop) { _ in count.add() }
        sender = nil
        for _ in 0..<100 { center.post(name: .notifTestA, object: Sender(8)) }
        // Two barriers: whatever the posts queued for the loop has run by then.
        try a.loop.performAndWait { }
        try a.loop.performAndWait { }
        #expect(count.value == 0)
        withExtendedLifetime(token) { }
    }

    /// Observers on the posting thread run inline, synchronously, in registration order (named and
    /// any-name observers interleaved by registration).
    @Test func postingThreadObserversRunInlineInRegistrationOrder() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "tnc-inline")
        defer { a.stop() }
        let order = NotifLog<String>()
        let result = try a.loop.performAndWait { () -> [String] in
            var tokens: [NotificationObservation] = []
            tokens.append(center.addObserver(forName: .notifTestA) { _ in order.append("1") })
            tokens.append(center.addObserver(forName: nil) { _ in order.append("2-any") })
            tokens.append(center.addObserver(forName: .notifTestA) { _ in order.append("3") })
            tokens.append(center.addObserver(forName: nil) { _ in order.append("4-any") })
            tokens.append(center.addObserver(forName: .notifTestA) { _ in order.append("5") })
            center.post(name: .notifTestA)
            let seen = order.all // all ran before post returned
            withExtendedLifetime(tokens) { }
            return seen
        }
        #expect(result == ["1", "2-any", "3", "4-any", "5"])
    }

    /// Inline observers run after the cross-thread deliveries are queued: a notification an inline
    /// handler posts reaches other threads after the one that triggered it.
    @Test func aPostFromAnInlineHandlerReachesOtherThreadsAfterTheFirst() throws {
        let center = ThreadNotificationCenter()
        let poster = try RunLoopThread(name: "tnc-chain-p")
        let remote = try RunLoopThread(name: "tnc-chain-r")
        defer { poster.stop(); remote.stop() }
        let seen = NotifLog<String>()
        let remoteToken = center.addObserver(forName: nil, on: remote.loop) { seen.append($0.name.rawValue) }
        let chainToken = center.addObserver(forName: .notifTestA, on: poster.loop) { _ in
            center.post(name: .notifTestB)
        }
        try poster.loop.performAndWait { center.post(name: .notifTestA) }
        try center.postAndWait(name: .notifTestC)
        #expect(seen.all == [Notification.Name.notifTestA, .notifTestB, .notifTestC].map(\.rawValue))
        withExtendedLifetime((remoteToken, chainToken)) { }
    }

    /// First in, first out per posting thread, for every observer, with 4 posters and 2 observer
    /// threads.
    @Test func deliversInPostOrderPerPoster() throws {
        let center = ThreadNotificationCenter()
        let posters = 4
        let perPoster = 5_000
        let observers = [try RunLoopThread(name: "tnc-fifo-1"), try RunLoopThread(name: "tnc-fifo-2")]
        defer { observers.forEach { $0.stop() } }
        let logs = observers.map { _ in (0..<posters).map { _ in NotifLog<Int>() } }
        let wrongThread = NotifCountdown()
        var tokens: [NotificationObservation] = []
        for thread in observers { // for the final flush: same loop, same modes, so the same FIFO
            tokens.append(center.addObserver(forName: .notifTestB, on: thread.loop) { _ in })
        }
        for (index, thread) in observers.enumerated() {
            let name = thread.name
            tokens.append(center.addObserver(forName: .notifTestA, on: thread.loop) { note in
                if notifThreadName != name { wrongThread.add() }
                logs[index][note.userInfo!["p"] as! Int].append(note.userInfo!["s"] as! Int)
            })
        }
        let start = Signal()
        let finished = (0..<posters).map { p in
            notifSpawn("tnc-poster-\(p)") {
                _ = start.wait()
                for s in 0..<perPoster { center.post(name: .notifTestA, object: nil, userInfo: ["p": p, "s": s]) }
            }
        }
        for _ in 0..<posters { start.fire() }
        for f in finished { #expect(f.wait(seconds: 90)) }
        try center.postAndWait(name: .notifTestB) // lanes are FIFO: everything before is delivered
        for index in observers.indices {
            for p in 0..<posters {
                let got = logs[index][p].all
                #expect(got == Array(0..<perPoster), "observer \(index), poster \(p): \(notifOrderReport(got, perPoster))")
            }
        }
        #expect(wrongThread.value == 0)
        withExtendedLifetime(tokens) { }
    }

    /// Cross-thread deliveries wait for a run in one of the observation's modes.
    @Test func deliversOnlyInTheObservationsModes() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "tnc-modes")
        defer { a.stop() }
        let custom = RunLoop.Mode("tnc.custom")
        let got = NotifCountdown()
        let token = center.addObserver(forName: .notifTestA, on: a.loop, inModes: [custom]) { _ in got.add() }
        center.post(name: .notifTestA)
        try a.loop.performAndWait { }   // runs in the default mode: no delivery
        try a.loop.performAndWait { }
        #expect(got.value == 0)
        #expect(center.queue(for: a.loop).metrics.depth == 1)
        let handled = try a.loop.performAndWait { a.loop.run(mode: custom, before: Date(timeIntervalSinceNow: 20)) }
        #expect(handled)
        #expect(got.value == 1)
        withExtendedLifetime(token) { }
    }

    /// A burst of posts to a busy thread costs one drain and at most one wake, never one per
    /// notification.
    @Test func oneWakePerBatchNotOnePerNotification() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "tnc-batch")
        defer { a.stop() }
        let got = NotifCountdown()
        let token = center.addObserver(forName: .notifTestA, on: a.loop) { _ in got.add() }
        let queue = center.queue(for: a.loop)
        // Let the loop go to sleep first, so the burst finds it parked.
        try a.loop.performAndWait { }
        let release = holdLoop(a)
        let wakesBefore = a.loop.metrics.wakeSignals
        for _ in 0..<1_000 { center.post(name: .notifTestA) }
        #expect(queue.metrics.drainsScheduled == 1)
        #expect(queue.metrics.depth == 1_000)
        release.fire()
        #expect(got.wait(for: 1_000))
        let wakes = a.loop.metrics.wakeSignals - wakesBefore
        #expect(wakes <= 1, "\(wakes) wake signals for one batch of 1000")
        // One drain for the batch, plus at most one continuation scheduled by the drain itself.
        #expect(queue.metrics.drainsScheduled <= 2)
        withExtendedLifetime(token) { }
    }

    @Test func defaultLoopIsTheCallersThread() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "tnc-default")
        defer { a.stop() }
        let got = NotifLog<String>()
        let token = try a.loop.performAndWait {
            center.addObserver(forName: .notifTestA) { _ in got.append(notifThreadName) }
        }
        try center.postAndWait(name: .notifTestA)
        #expect(got.all == ["tnc-default"])
        withExtendedLifetime(token) { }
    }

    final class WindowController: @unchecked Sendable {
        let closed = NotifLog<String>()
        func windowDidClose(_ note: Notification) { closed.append("\(notifThreadName):\(note.object as? String ?? "")") }
    }

    @Test func observerObjectAndMethod() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "tnc-method")
        defer { a.stop() }
        let controller = WindowController()
        let token = center.addObserver(controller, name: .notifTestA, on: a.loop) { me, note in me.windowDidClose(note) }
        try center.postAndWait(name: .notifTestA, object: "w1")
        #expect(controller.closed.all == ["tnc-method:w1"])
        center.removeObserver(controller, name: .notifTestB) // another name: stays
        #expect(token.isActive)
        center.removeObserver(controller, name: .notifTestA, object: "other") // another sender filter: stays
        #expect(token.isActive)
        center.removeObserver(controller)
        #expect(!token.isActive)
        try center.postAndWait(name: .notifTestA, object: "w2")
        #expect(controller.closed.all == ["tnc-method:w1"])
    }

    @Test func observationCountTracksTokens() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "tnc-count")
        defer { a.stop() }
        var tokens = (0..<5).map { _ in center.addObserver(forName: .notifTestA, on: a.loop) { _ in } }
        #expect(center.observationCount == 5)
        tokens.removeLast(2)
        #expect(center.observationCount == 3)
        tokens[0].remove()
        #expect(center.observationCount == 2)
    }

    @Test func observingOnAStoppedThreadGivesAnInactiveToken() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "tnc-stopped")
        a.stop()
        let token = center.addObserver(forName: .notifTestA, on: a.loop) { _ in }
        #expect(!token.isActive)
        // Bounded: a wait that hung would throw `timedOut` and fail here.
        #expect(try center.postAndWait(name: .notifTestA, timeout: .seconds(5)) == 0)
    }

    struct NotHashable { var x = 1 }

    @Test func aSenderFilterThatCanNeverMatchIsAProgrammerError() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let center = ThreadNotificationCenter()
            let a = try RunLoopThread(name: "tnc-badsender")
            _ = center.addObserver(forName: .notifTestA, object: NotHashable(), on: a.loop) { _ in }
        }
        #expect(notifStandardError(result).contains("neither a class instance nor Hashable"))
    }

    @Test func anEmptyModeListIsAProgrammerError() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let center = ThreadNotificationCenter()
            let a = try RunLoopThread(name: "tnc-nomodes")
            _ = center.addObserver(forName: .notifTestA, on: a.loop, inModes: []) { _ in }
        }
        #expect(notifStandardError(result).contains("the mode list is empty"))
    }
}
