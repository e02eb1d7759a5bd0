import Foundation
import PortRunLoopKit
import PortRunLoopStressEngine
import Synchronization
import Testing
import PortRunLoopTestSupport

/// Misuse of `MessagePort`: every mistake gets a false return, a precondition naming
/// it, or a documented no-op, and never loses an accepted message silently.
@Suite(.timeLimit(.minutes(1))) struct PortMisuseTests {
    @Test func sendToAnInvalidatedPortIsRejectedAndNeverDelivered() throws {
        let thread = try RunLoopThread(name: "inval-send")
        defer { thread.stop() }
        let port = MessagePort(queueLimit: 10)
        let delivered = CallCounter()
        port.setHandler { _ in delivered.increment() }
        thread.loop.add(port, forMode: .common)
        port.invalidate()
        port.invalidate() // idempotent
        #expect(!port.isValid)
        #expect(!port.send(before: .distantFuture, msgid: 1), "a send to an invalidated port must return false")
        #expect(!port.send(before: Date(), msgid: 2))
        try thread.loop.performAndWait {}
        try thread.loop.performAndWait {}
        #expect(delivered.value == 0)
        let stats = port.statistics
        #expect(stats.sent == 0 && stats.rejected == 2 && stats.delivered == 0 && stats.queued == 0)
    }

    @Test func addingAnInvalidatedPortDoesNothing() throws {
        let thread = try RunLoopThread(name: "inval-add")
        defer { thread.stop() }
        let port = MessagePort()
        port.invalidate()
        thread.loop.add(port, forMode: .default) // documented no-op
        #expect(!port.send(before: Date()))
        // The port is in no loop: another loop may "schedule" it without tripping the one-loop rule.
        let other = try RunLoopThread(name: "inval-add-2")
        defer { other.stop() }
        other.loop.add(port, forMode: .default)
        try other.loop.performAndWait {}
    }

    @Test func queueLimitOfZeroIsAPreconditionFailure() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = MessagePort(queueLimit: 0)
        }
        expectMessage(result, contains: "queue limit must be at least 1")
    }

    @Test func negativeQueueLimitIsAPreconditionFailure() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = MessagePort(queueLimit: -3)
        }
        expectMessage(result, contains: "queue limit must be at least 1")
    }

    @Test func settingANonPositiveQueueLimitIsAPreconditionFailure() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let port = MessagePort()
            port.queueLimit = 0
        }
        expectMessage(result, contains: "queueLimit must be at least 1")
    }

    @Test func schedulingOnePortInTwoLoopsIsAPreconditionFailure() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let a = try! RunLoopThread(name: "loop-a")
            let b = try! RunLoopThread(name: "loop-b")
            let port = MessagePort()
            a.loop.add(port, forMode: .default)
            b.loop.add(port, forMode: .default)
        }
        expectMessage(result, contains: "already scheduled in another PortRunLoop")
    }

    @Test func aPortRemovedFromItsLoopMayMoveToAnotherAndKeepsItsMessages() throws {
        let a = try RunLoopThread(name: "move-a")
        let b = try RunLoopThread(name: "move-b")
        defer { a.stop(); b.stop() }
        let port = MessagePort(queueLimit: 10)
        let seen = Locked<[(UInt32, String)]>([])
        port.setHandler { m in seen.withLock { $0.append((m.msgid, Thread.current.name ?? "?")) } }
        a.loop.add(port, forMode: .default)
        #expect(port.send(before: Date(), msgid: 1))
        try a.loop.performAndWait {}
        try a.loop.performAndWait {}
        a.loop.remove(port, forMode: .default)
        try a.loop.performAndWait {} // the removal has taken effect
        #expect(port.send(before: Date(), msgid: 2)) // held: the port is in no loop
        b.loop.add(port, forMode: .default)
        try b.loop.performAndWait {}
        try b.loop.performAndWait {}
        let got = seen.withLock { $0 }
        #expect(got.map(\.0) == [1, 2])
        #expect(got.map(\.1) == ["move-a", "move-b"])
    }

    @Test func aPortAddedToAShutDownLoopRejectsSends() throws {
        let thread = try RunLoopThread(name: "dead-add")
        let loop = thread.loop
        thread.stop()
        #expect(loop.isShutDown)
        let port = MessagePort()
        loop.add(port, forMode: .default)
        // A shut-down loop invalidates every port scheduled in it; a send must not be "accepted"
        // into a port nothing will ever drain.
        #expect(!port.send(before: Date()), "a send to a port scheduled in a dead loop must report failure")
        #expect(!port.isValid)
    }

    @Test func aPortAddedWhileItsLoopShutsDownRejectsSends() throws {
        // The registration is queued behind a blocked loop that is then stopped: the loop shuts
        // down with the registration still queued.
        for _ in 0..<20 {
            let thread = try RunLoopThread(name: "racing-add")
            let release = holdLoop(thread)
            let port = MessagePort()
            thread.loop.add(port, forMode: .default)
            let stopper = JoinableThread(name: "stopper") { thread.stop() }
            release.fire()
            stopper.join()
            #expect(thread.loop.isShutDown)
            #expect(!port.send(before: Date()), "accepted into a port of a dead loop: it would never be delivered")
        }
    }

    @Test func aNaNSendDateIsAPreconditionFailureEvenWithRoom() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let port = MessagePort()
            _ = port.send(before: Date(timeIntervalSinceReferenceDate: .nan))
        }
        expectMessage(result, contains: "date is NaN")
    }

    @Test func droppingAPortWithQueuedMessagesIsSafe() throws {
        let thread = try RunLoopThread(name: "drop-port")
        defer { thread.stop() }
        weak var weakPort: MessagePort?
        do {
            let port = MessagePort(queueLimit: 100)
            weakPort = port
            port.setHandler { _ in }
            let release = holdLoop(thread)
            thread.loop.add(port, forMode: .default)
            for i in 0..<50 { #expect(port.send(before: Date(), msgid: UInt32(i))) }
            port.invalidate()
            release.fire()
        }
        try thread.loop.performAndWait {}
        try thread.loop.performAndWait {}
        #expect(weakPort == nil, "an invalidated port must not be kept alive by its loop")
    }
}
