import Foundation
import PortRunLoopKit
import Synchronization
import Testing
import PortRunLoopTestSupport

/// Queued deliveries do not retain their observation: the lane pins it once per batch
/// (`DeliveryLane`, "Pins"). These check both halves of that promise: an observation lives as long
/// as a delivery that names it, even when its handler ends it and drains the rest nested; and it is
/// freed once nothing names it any more (the pins never keep it, or its lane, alive).
@Suite(.timeLimit(.minutes(2)))
struct LanePinTests {
    /// Captured by a handler; tells whether the observation (which owns the handler) was freed.
    final class Tracked: Sendable {}

    @Test func anEndedObservationIsFreedOnceItsQueuedDeliveriesAreDiscarded() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "pin-free")
        defer { a.stop() }
        weak var weakTracked: Tracked?
        let queue = center.queue(for: a.loop)
        let release = holdLoop(a)
        do {
            let tracked = Tracked()
            weakTracked = tracked
            let token = center.addObserver(forName: .notifTestA, on: a.loop) { _ in withExtendedLifetime(tracked) {} }
            for _ in 0..<100 { center.post(name: .notifTestA) }
            token.remove()
        }
        // Only the lane's pins name the observation now.
        #expect(weakTracked != nil)
        release.fire()
        try a.loop.performAndWait { }
        #expect(queue.metrics.discarded == 100)
        #expect(weakTracked == nil, "the pins kept an ended observation alive after its deliveries were discarded")
    }

    @Test func aDeliveredObservationIsFreedAfterItsLastDelivery() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "pin-delivered")
        defer { a.stop() }
        weak var weakTracked: Tracked?
        let got = NotifCountdown()
        let release = holdLoop(a)
        do {
            let tracked = Tracked()
            weakTracked = tracked
            let token = center.addObserver(forName: .notifTestA, on: a.loop) { _ in
                withExtendedLifetime(tracked) { got.add() }
            }
            for _ in 0..<10 { center.post(name: .notifTestA) }
            release.fire()
            #expect(got.wait(for: 10))
            token.remove()
        }
        try a.loop.performAndWait { }
        #expect(weakTracked == nil)
    }

    /// The synchronous drain delivers the queued entries ahead of its own one by one. Here the loop
    /// thread is itself waiting in `performAndWait` (so only synchronous work runs), an asynchronous
    /// post for observation O is queued, then a `postAndWait` for observation P on the same lane:
    /// the synchronous drain takes O's entry off the queue while P's is still behind it. O's handler
    /// ends O, drops the last reference to it and runs the loop nested: the nested asynchronous
    /// drain delivers P's entry and releases the batch's pins. O must outlive the handler call still
    /// on the stack (the synchronous drain holds it), and be freed afterwards.
    @Test func aHandlerThatEndsItsObservationAndDrainsNestedKeepsItAliveUntilItReturns() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "pin-nested")
        let c = try RunLoopThread(name: "pin-blocker")
        defer { a.stop(); c.stop() }
        let queue = center.queue(for: a.loop)
        weak var weakTracked: Tracked?
        let token = NotifBox<NotificationObservation?>(nil)
        let calls = NotifCountdown()
        let nestedReturned = Signal()
        do {
            let tracked = Tracked()
            weakTracked = tracked
            token.value = center.addObserver(forName: .notifTestA, on: a.loop) { [loop = a.loop] _ in
                withExtendedLifetime(tracked) { calls.add() }
                guard let observation = token.value else { return }
                observation.remove()
                token.value = nil // now only the lane's pins name the observation
                _ = loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: false)
                nestedReturned.fire()
            }
        }
        let otherCalls = NotifCountdown()
        let other = center.addObserver(forName: .notifTestB, on: a.loop) { _ in otherCalls.add() }
        // The loop thread waits on C (held), serving synchronous work only.
        let releaseC = holdLoop(c)
        let waiting = Signal()
        a.loop.perform {
            waiting.fire()
            try? c.loop.performAndWait { }
        }
        #expect(waiting.wait())
        center.post(name: .notifTestA) // queued; its drain cannot run while A waits
        let poster = notifSpawn("pin-poster") { _ = try? center.postAndWait(name: .notifTestB) }
        #expect(poster.wait(seconds: 60))
        releaseC.fire()
        // Not a barrier call alone: the nested run would serve it before the handler returns.
        #expect(nestedReturned.wait())
        try a.loop.performAndWait { }
        #expect(calls.value == 1)
        #expect(otherCalls.value == 1)
        let m = queue.metrics
        #expect(m.delivered == 2)
        #expect(m.discarded == 0)
        #expect(weakTracked == nil)
        withExtendedLifetime(other) {}
    }
}
