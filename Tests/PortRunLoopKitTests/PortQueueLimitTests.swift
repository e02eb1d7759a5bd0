import Foundation
import PortRunLoopKit
import Synchronization
import Testing
import PortRunLoopTestSupport

/// The Mach-style queue limit: full queues reject zero-deadline sends, block timed sends, and
/// release blocked senders once the loop takes messages.
@Suite(.timeLimit(.minutes(1))) struct PortQueueLimitTests {
    @Test func defaultLimitIsMachsDefault() {
        #expect(MessagePort.defaultQueueLimit == 5)
        #expect(MessagePort().queueLimit == 5)
    }

    @Test func zeroDeadlineWithFullQueueReturnsFalseAtOnce() {
        let port = MessagePort(queueLimit: 2)
        #expect(port.send(before: Date()))
        #expect(port.send(before: .distantPast))
        #expect(!port.send(before: Date()))
        #expect(!port.send(before: .distantPast))
        let stats = port.statistics
        #expect(stats.sent == 2 && stats.rejected == 2 && stats.queued == 2)
    }

    @Test func timedSendWaitsUntilItsDateThenFails() {
        let port = MessagePort(queueLimit: 1)
        #expect(port.send(before: Date()))
        let start = Date()
        let deadline = start.addingTimeInterval(0.2)
        #expect(!port.send(before: deadline))
        #expect(Date() >= deadline, "a timed send must not give up before its date")
        #expect(port.statistics.rejected == 1)
    }

    @Test func blockedSenderProceedsWhenTheLoopTakesMessages() throws {
        let thread = try RunLoopThread(name: "drainer")
        defer { thread.stop() }
        let port = MessagePort(queueLimit: 1)
        let gateOpen = Signal()
        let received = Recorder<UInt32>()
        port.setHandler { received.append($0.msgid) }
        // Hold the loop inside a block so the port cannot drain yet.
        let holding = Signal()
        thread.loop.perform { holding.fire(); _ = gateOpen.wait() }
        #expect(holding.wait())
        thread.loop.add(port, forMode: .common)
        #expect(port.send(before: Date(), msgid: 1))
        let secondResult = Locked<Bool?>(nil)
        let secondDone = Signal()
        Thread.detachNewThread {
            let ok = port.send(before: .distantFuture, msgid: 2) // blocks: queue full
            secondResult.withLock { $0 = ok }
            secondDone.fire()
        }
        #expect(!secondDone.wait(seconds: 0.05), "the second send must block while the queue is full")
        gateOpen.fire()
        #expect(secondDone.wait())
        #expect(secondResult.withLock { $0 } == true)
        try thread.loop.performAndWait {}
        #expect(received.values == [1, 2])
    }

    @Test func invalidationReleasesBlockedSendersWithFalse() {
        let port = MessagePort(queueLimit: 1)
        #expect(port.send(before: Date()))
        let result = Locked<Bool?>(nil)
        let done = Signal()
        let started = Signal()
        Thread.detachNewThread {
            started.fire()
            let ok = port.send(before: .distantFuture)
            result.withLock { $0 = ok }
            done.fire()
        }
        #expect(started.wait())
        // Most likely inside its wait for room by now; it must not have returned, at least.
        #expect(!done.wait(seconds: 0.05), "the send must wait while the queue is full")
        port.invalidate()
        #expect(done.wait())
        #expect(result.withLock { $0 } == false)
        #expect(port.statistics.discarded == 1)
    }

    @Test func raisingTheLimitReleasesBlockedSenders() {
        let port = MessagePort(queueLimit: 1)
        #expect(port.send(before: Date()))
        let done = Signal()
        let result = Locked<Bool?>(nil)
        Thread.detachNewThread {
            let ok = port.send(before: .distantFuture)
            result.withLock { $0 = ok }
            done.fire()
        }
        #expect(!done.wait(seconds: 0.05), "the send must wait while the queue is full")
        port.queueLimit = 2
        #expect(done.wait())
        #expect(result.withLock { $0 } == true)
        #expect(port.statistics.queued == 2)
    }
}
