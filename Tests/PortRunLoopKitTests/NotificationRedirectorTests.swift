import Foundation
import PortRunLoopKit
import Synchronization
import Testing
import PortRunLoopTestSupport

/// The per-object technique of Apple's *Delivering Notifications To Particular Threads* (`NotificationRedirector`).
@Suite(.timeLimit(.minutes(2)))
struct NotificationRedirectorTests {
    @Test func handlesInlineOnTheTargetThread() throws {
        let target = try RunLoopThread(name: "redir-inline")
        defer { target.stop() }
        let log = NotifLog<String>()
        let redirector = NotificationRedirector(loop: target.loop) { _ in log.append(notifThreadName) }
        let countInside = try target.loop.performAndWait { () -> Int in
            redirector.process(Notification(name: .notifTestA))
            return log.count // handled before process returned
        }
        #expect(countInside == 1)
        #expect(log.all == ["redir-inline"])
        #expect(redirector.port.statistics.sent == 0) // no signal needed on the right thread
    }

    @Test func redirectsFromAnotherThreadToTheTarget() throws {
        let target = try RunLoopThread(name: "redir-target")
        defer { target.stop() }
        let log = NotifLog<String>()
        let done = NotifCountdown()
        let redirector = NotificationRedirector(loop: target.loop) { note in
            log.append("\(notifThreadName):\(note.name.rawValue)")
            done.add()
        }
        redirector.process(Notification(name: .notifTestA))
        redirector.process(Notification(name: .notifTestB))
        #expect(done.wait(for: 2))
        #expect(log.all == ["redir-target:\(Notification.Name.notifTestA.rawValue)",
                            "redir-target:\(Notification.Name.notifTestB.rawValue)"])
        #expect(redirector.pendingCount == 0)
    }

    /// The issue's acceptance test: 100k notifications from 4 threads through a port whose queue
    /// limit is 1, so most signals are dropped; every notification must still arrive, in order per
    /// poster.
    @Test func hundredThousandFromFourThreadsWithQueueLimitOne() throws {
        let posters = 4
        let perPoster = 25_000
        let total = posters * perPoster
        let target = try RunLoopThread(name: "redir-100k")
        defer { target.stop() }
        let received = (0..<posters).map { _ in NotifLog<Int>() }
        let done = NotifCountdown()
        let redirector = NotificationRedirector(loop: target.loop, queueLimit: 1) { note in
            let info = note.userInfo!
            let poster = info["p"] as! Int
            let seq = info["s"] as! Int
            received[poster].append(seq)
            done.add()
        }
        let start = Signal()
        var finished: [Signal] = []
        for p in 0..<posters {
            finished.append(notifSpawn("redir-poster-\(p)") {
                _ = start.wait()
                for s in 0..<perPoster {
                    redirector.process(Notification(name: .notifTestA, object: nil, userInfo: ["p": p, "s": s]))
                }
            })
        }
        for _ in 0..<posters { start.fire() }
        for f in finished { #expect(f.wait(seconds: 90)) }
        #expect(done.wait(for: total, seconds: 90))
        for p in 0..<posters {
            let got = received[p].all
            #expect(got == Array(0..<perPoster), "poster \(p): \(notifOrderReport(got, perPoster))")
        }
        let stats = redirector.port.statistics
        // Every cross-thread process() signalled once; with limit 1 most signals were dropped.
        #expect(stats.sent + stats.rejected == total)
        #expect(stats.sent >= 1)
        print("NotificationRedirector 100k/limit 1: signals sent \(stats.sent), dropped \(stats.rejected)")
    }

    final class CountingRedirector: NotificationRedirector, @unchecked Sendable {
        let names = NotifLog<String>()
        let done = NotifCountdown()
        override func handle(_ notification: Notification) {
            names.append("\(notifThreadName)/\(notification.name.rawValue)")
            done.add()
        }
    }

    @Test func subclassOverridesHandle() throws {
        let target = try RunLoopThread(name: "redir-sub")
        defer { target.stop() }
        let redirector = CountingRedirector(loop: target.loop)
        redirector.process(Notification(name: .notifTestC))
        #expect(redirector.done.wait(for: 1))
        #expect(redirector.names.all == ["redir-sub/\(Notification.Name.notifTestC.rawValue)"])
    }

    @Test func invalidateStopsDeliveryOfQueuedNotifications() throws {
        let target = try RunLoopThread(name: "redir-inval")
        defer { target.stop() }
        let count = NotifCountdown()
        let redirector = NotificationRedirector(loop: target.loop) { _ in count.add() }
        let release = holdLoop(target)
        for _ in 0..<10 { redirector.process(Notification(name: .notifTestA)) }
        #expect(redirector.pendingCount == 10)
        redirector.invalidate()
        #expect(!redirector.isValid)
        #expect(redirector.pendingCount == 0)
        release.fire()
        try target.loop.performAndWait { }
        redirector.process(Notification(name: .notifTestA)) // after invalidate: ignored
        try target.loop.performAndWait { }
        #expect(count.value == 0)
        #expect(redirector.waitForRunningHandler(timeout: .seconds(5)))
    }

    @Test func observesAFoundationCenterLikeTheArticle() throws {
        let target = try RunLoopThread(name: "redir-fnd")
        defer { target.stop() }
        let foundation = NotificationCenter()
        let log = NotifLog<String>()
        let done = NotifCountdown()
        let redirector = NotificationRedirector(loop: target.loop) { note in
            log.append("\(notifThreadName):\(note.userInfo?["n"] as? Int ?? -1)")
            done.add()
        }
        redirector.observe(.notifTestA, in: foundation)
        let poster = notifSpawn("redir-fnd-poster") {
            for n in 0..<3 { foundation.post(name: .notifTestA, object: nil, userInfo: ["n": n]) }
            foundation.post(name: .notifTestB, object: nil) // another name: not observed
        }
        #expect(poster.wait())
        #expect(done.wait(for: 3))
        #expect(log.all == ["redir-fnd:0", "redir-fnd:1", "redir-fnd:2"])
        redirector.invalidate()
        foundation.post(name: .notifTestA, object: nil, userInfo: ["n": 9]) // removed from Foundation
        try target.loop.performAndWait { }
        #expect(log.count == 3)
    }

    @Test func handleMessageOffTheTargetThreadIsAProgrammerError() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            // The mistake: making the redirector the delegate of a port scheduled on another thread.
            let target = try RunLoopThread(name: "redir-misuse")
            let other = try RunLoopThread(name: "redir-other")
            let redirector = NotificationRedirector(loop: target.loop) { _ in }
            let foreignPort = MessagePort()
            foreignPort.delegate = redirector
            other.loop.add(foreignPort, forMode: .common)
            foreignPort.send(before: .distantFuture)
            try other.loop.performAndWait { }
            try other.loop.performAndWait { }
            withExtendedLifetime(redirector) { }
        }
        #expect(notifStandardError(result).contains("NotificationRedirector.handleMessage(_:)"))
    }

    @Test func aRedirectorWithoutHandlerIsAProgrammerError() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let target = try RunLoopThread(name: "redir-nohandler")
            let redirector = NotificationRedirector(loop: target.loop)
            try target.loop.performAndWait { redirector.process(Notification(name: .notifTestA)) }
        }
        #expect(notifStandardError(result).contains("no handler"))
    }
}
