import Foundation
import PortRunLoopKit
import Synchronization
import Testing

/// Redirecting notifications posted on Foundation's `NotificationCenter` to observers on chosen
/// threads.
@Suite(.timeLimit(.minutes(2)))
struct FoundationBridgeTests {
    /// The article's scenario: posted on a Foundation center on a background thread, handled on the
    /// observers' own threads, in order.
    @Test func bridgeRedirectsFoundationPostsToObserverThreads() throws {
        let foundation = NotificationCenter()
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "fb-a")
        let b = try RunLoopThread(name: "fb-b")
        defer { a.stop(); b.stop() }
        let logA = NotifLog<String>()
        let logB = NotifLog<String>()
        let bridge = center.bridge(from: foundation, name: .notifTestA)
        let tA = center.addObserver(forName: .notifTestA, on: a.loop) { logA.append("\(notifThreadName):\($0.userInfo!["n"]!)") }
        let tB = center.addObserver(forName: .notifTestA, on: b.loop) { logB.append("\(notifThreadName):\($0.userInfo!["n"]!)") }
        let poster = notifSpawn("fb-poster") {
            for n in 0..<100 { foundation.post(name: .notifTestA, object: nil, userInfo: ["n": n]) }
            foundation.post(name: .notifTestB, object: nil) // not bridged
        }
        #expect(poster.wait())
        try center.postAndWait(name: .notifTestC) // flush (no observers for C: returns at once)
        try a.loop.performAndWait { }
        try b.loop.performAndWait { }
        #expect(logA.all == (0..<100).map { "fb-a:\($0)" })
        #expect(logB.all == (0..<100).map { "fb-b:\($0)" })
        withExtendedLifetime((bridge, tA, tB)) { }
    }

    final class Window: @unchecked Sendable {}

    @Test func bridgeFiltersBySender() throws {
        let foundation = NotificationCenter()
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "fb-filter")
        defer { a.stop() }
        let window = Window()
        let got = NotifLog<String>()
        let objectBridge = center.bridge(from: foundation, name: .notifTestA, object: window)
        let valueBridge = center.bridge(from: foundation, name: .notifTestB, object: "doc-1")
        let token = center.addObserver(forName: nil, on: a.loop) { note in
            got.append("\(note.name == .notifTestA ? "A" : "B"):\(note.object is Window ? "window" : (note.object as? String ?? "?"))")
        }
        foundation.post(name: .notifTestA, object: Window()) // another window: filtered by identity
        foundation.post(name: .notifTestA, object: window)
        foundation.post(name: .notifTestB, object: "doc-2")
        foundation.post(name: .notifTestB, object: "doc-1")  // a value sender: matched by equality
        try center.postAndWait(name: .notifTestC, object: "flush")
        #expect(got.all == ["A:window", "B:doc-1", "B:flush"]) // the last is the flush (name C)
        withExtendedLifetime((objectBridge, valueBridge, token)) { }
    }

    @Test func removingTheBridgeStopsReposts() throws {
        let foundation = NotificationCenter()
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "fb-remove")
        defer { a.stop() }
        let got = NotifCountdown()
        let bridge = center.bridge(from: foundation, name: .notifTestA)
        let token = center.addObserver(forName: .notifTestA, on: a.loop) { _ in got.add() }
        foundation.post(name: .notifTestA, object: nil)
        #expect(got.wait(for: 1))
        bridge.remove()
        #expect(!bridge.isActive)
        #expect(bridge.waitForRunningHandlers(timeout: .seconds(10)))
        foundation.post(name: .notifTestA, object: nil)
        try a.loop.performAndWait { }
        try a.loop.performAndWait { }
        #expect(got.value == 1)
        withExtendedLifetime(token) { }
    }

    /// One call: observe a Foundation center and handle on a chosen thread; removable like any
    /// observation, including for notifications already queued.
    /// Observing a Foundation center on a loop that has shut down: an inactive token, and nothing
    /// left in the Foundation center; on a loop that shuts down later, the token turns inactive.
    @Test func oneCallObservationOnADeadLoopIsInactive() throws {
        let foundation = NotificationCenter()
        let center = ThreadNotificationCenter()
        let dead = try RunLoopThread(name: "fb-dead")
        dead.stop()
        let ran = NotifCountdown()
        let token = center.addObserver(forName: .notifTestA, object: nil, postedOn: foundation, on: dead.loop) { _ in ran.add() }
        #expect(!token.isActive)
        foundation.post(name: .notifTestA, object: nil)
        #expect(ran.value == 0)
        let later = try RunLoopThread(name: "fb-later")
        let second = center.addObserver(forName: .notifTestA, object: nil, postedOn: foundation, on: later.loop) { _ in ran.add() }
        #expect(second.isActive)
        later.stop()
        #expect(!second.isActive)
    }

    @Test func oneCallObservationOfAFoundationCenter() throws {
        let foundation = NotificationCenter()
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "fb-onecall")
        defer { a.stop() }
        let log = NotifLog<String>()
        let token = center.addObserver(forName: .notifTestA, object: "sender", postedOn: foundation, on: a.loop) { note in
            log.append("\(notifThreadName):\(note.userInfo!["n"]!)")
        }
        foundation.post(name: .notifTestA, object: "sender", userInfo: ["n": 1])
        foundation.post(name: .notifTestA, object: "someone else", userInfo: ["n": 2])
        center.post(name: .notifTestA, object: "sender", userInfo: ["n": 3]) // not via Foundation: not observed
        try a.loop.performAndWait { }
        try a.loop.performAndWait { }
        #expect(log.all == ["fb-onecall:1"])
        let release = holdLoop(a)
        foundation.post(name: .notifTestA, object: "sender", userInfo: ["n": 4]) // queued for a
        token.remove()
        release.fire()
        foundation.post(name: .notifTestA, object: "sender", userInfo: ["n": 5])
        try a.loop.performAndWait { }
        try a.loop.performAndWait { }
        #expect(log.all == ["fb-onecall:1"])
        #expect(center.queue(for: a.loop).metrics.discarded == 1)
    }

    /// Posted on the observer's own thread, a bridged notification is handled inline, before the
    /// Foundation post returns (Foundation's synchronous semantics).
    @Test func bridgedPostOnTheObserversThreadIsInline() throws {
        let foundation = NotificationCenter()
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "fb-inline")
        defer { a.stop() }
        let got = NotifCountdown()
        let bridge = center.bridge(from: foundation, name: .notifTestA)
        let token = center.addObserver(forName: .notifTestA, on: a.loop) { _ in got.add() }
        let inline = try a.loop.performAndWait { () -> Int in
            foundation.post(name: .notifTestA, object: nil)
            return got.value
        }
        #expect(inline == 1)
        withExtendedLifetime((bridge, token)) { }
    }
}
