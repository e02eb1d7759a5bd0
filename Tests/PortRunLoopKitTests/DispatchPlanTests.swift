import Foundation
import PortRunLoopKit
import Testing

/// The center's cached dispatch plans (the post hot path): a plan made before an observation was
/// added or removed is never used after it, and a plan keeps registration order across named,
/// any-name and sender-filtered observations on several threads.
@Suite(.timeLimit(.minutes(1))) struct DispatchPlanTests {
    @Test func anObservationAddedOrRemovedBetweenPostsTakesEffectAtTheNextPost() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "plan-a")
        defer { a.stop() }
        let log = NotifLog<String>()
        let first = center.addObserver(forName: .notifTestA, on: a.loop) { _ in log.append("first") }
        center.post(name: .notifTestA)                 // makes (and caches) the plan: [first]
        let second = center.addObserver(forName: .notifTestA, on: a.loop) { _ in log.append("second") }
        center.post(name: .notifTestA)                 // a new plan: [first, second]
        try a.loop.performAndWait {}                   // delivered (removal would discard them)
        first.remove()
        center.post(name: .notifTestA)                 // a new plan: [second]
        try a.loop.performAndWait {}                   // the lane's drains ran before this
        #expect(log.all == ["first", "first", "second", "second"])
        withExtendedLifetime(second) {}
    }

    @Test func alternatingNamesEachGetTheirOwnObservers() throws {
        // The center keeps the last plan used; posting other names in between must not mix them up.
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "plan-names")
        defer { a.stop() }
        let log = NotifLog<String>()
        let t1 = center.addObserver(forName: .notifTestA, on: a.loop) { log.append("A:" + $0.name.rawValue) }
        let t2 = center.addObserver(forName: .notifTestB, on: a.loop) { log.append("B:" + $0.name.rawValue) }
        for _ in 0..<3 {
            center.post(name: .notifTestA)
            center.post(name: .notifTestB)
            center.post(name: .notifTestC)             // nobody observes it
        }
        try a.loop.performAndWait {}
        let a1 = "A:" + Notification.Name.notifTestA.rawValue
        let b1 = "B:" + Notification.Name.notifTestB.rawValue
        #expect(log.all == [a1, b1, a1, b1, a1, b1])
        withExtendedLifetime((t1, t2)) {}
    }

    @Test func registrationOrderAcrossNamedAnyNameAndFilteredObserversOnTwoThreads() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "plan-a2")
        let b = try RunLoopThread(name: "plan-b2")
        defer { a.stop(); b.stop() }
        final class Sender: @unchecked Sendable {}
        let sender = Sender()
        let onA = NotifLog<Int>()
        let onB = NotifLog<Int>()
        let tokens = [
            center.addObserver(forName: .notifTestA, on: a.loop) { _ in onA.append(1) },
            center.addObserver(forName: nil, on: b.loop) { _ in onB.append(2) },
            center.addObserver(forName: .notifTestA, object: sender, on: a.loop) { _ in onA.append(3) },
            center.addObserver(forName: nil, on: a.loop) { _ in onA.append(4) },
            center.addObserver(forName: .notifTestA, object: Sender(), on: b.loop) { _ in onB.append(5) },
            center.addObserver(forName: .notifTestA, on: b.loop) { _ in onB.append(6) },
        ]
        center.post(name: .notifTestA, object: sender)  // all but 5 (another sender)
        center.post(name: .notifTestA)                  // no sender: 1, 2, 4, 6
        try a.loop.performAndWait {}
        try b.loop.performAndWait {}
        #expect(onA.all == [1, 3, 4, 1, 4])
        #expect(onB.all == [2, 6, 2, 6])
        withExtendedLifetime(tokens) {}
    }
}
