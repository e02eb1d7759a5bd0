import Foundation
@testable import PortRunLoopKit
import PortRunLoopStressEngine
import Synchronization
import Testing
import PortRunLoopTestSupport

/// invalidate(): no handler starts after it returns; queued messages are discarded and counted;
/// it is safe against racing senders.
@Suite(.timeLimit(.minutes(2))) struct PortInvalidateTests {
    @Test func invalidateRacingSendsFromFourThreads() throws {
        for round in 0..<20 {
            let thread = try RunLoopThread(name: "inv-\(round)")
            defer { thread.stop() }
            let port = MessagePort(queueLimit: 64)
            let invalidated = Atomic<Bool>(false)
            let lateStarts = Atomic<Int>(0)
            let handled = Atomic<Int>(0)
            port.setHandler { _ in
                // Any handler that starts after invalidate() returned is a violation.
                if invalidated.load(ordering: .acquiring) { lateStarts.add(1, ordering: .relaxed) }
                handled.add(1, ordering: .relaxed)
            }
            thread.loop.add(port, forMode: .common)
            let accepted = Atomic<Int>(0)
            let rejected = Atomic<Int>(0)
            let senders = DispatchGroup()
            let go = DispatchSemaphore(value: 0)
            for _ in 0..<4 {
                senders.enter()
                Thread.detachNewThread {
                    go.wait()
                    for _ in 0..<2_000 {
                        if port.send(before: Date()) { accepted.add(1, ordering: .relaxed) } else { rejected.add(1, ordering: .relaxed) }
                    }
                    senders.leave()
                }
            }
            for _ in 0..<4 { go.signal() }
            port.invalidate()
            // Wait for a handler that had already started (allowed) to finish, then flag.
            #expect(port.waitForRunningHandlers(timeout: .seconds(10)))
            invalidated.store(true, ordering: .releasing)
            senders.wait()
            try thread.loop.performAndWait {}
            #expect(lateStarts.load(ordering: .acquiring) == 0)
            let stats = port.statistics
            #expect(stats.sent == accepted.load(ordering: .acquiring))
            #expect(stats.rejected == rejected.load(ordering: .acquiring))
            #expect(stats.sent + stats.rejected == 8_000)
            // Every accepted message was either delivered or discarded: none lost, none twice.
            #expect(stats.delivered + stats.discarded == stats.sent)
            #expect(stats.delivered == handled.load(ordering: .acquiring))
            #expect(!port.send(before: .distantFuture))
        }
    }

    /// A second invalidate() that finds the first one still running returns with the port
    /// invalid all the same: a send after it is refused, and what was queued is discarded.
    @Test func aSecondInvalidateReturnsWithThePortInvalid() throws {
        let port = MessagePort(queueLimit: 4)
        #expect(port.send(before: Date(), msgid: 1)) // held: the port is in no loop
        let inObserver = Signal()
        let release = Signal()
        port.onInvalidation {
            inObserver.fire()
            _ = release.wait(seconds: 30)
        }
        let first = JoinableThread(name: "first-invalidate") { port.invalidate() }
        #expect(inObserver.wait())
        port.invalidate() // the first call is still running, inside its observer
        #expect(!port.send(before: Date(), msgid: 2), "a send after invalidate() returned was accepted")
        #expect(port.statistics.queued == 0)
        #expect(port.statistics.discarded == 1)
        release.fire()
        #expect(first.join(timeout: 30))
    }

    @Test func invalidateFromInsideTheHandlerStopsTheRestOfTheBatch() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let port = MessagePort(queueLimit: 10)
            let seen = Recorder<UInt32>()
            port.setHandler { message in
                seen.append(message.msgid)
                if message.msgid == 2 { message.receivePort.invalidate() }
            }
            loop.add(port, forMode: .default)
            for i in 1...5 { port.send(before: Date(), msgid: UInt32(i)) }
            _ = loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5))
            #expect(seen.values == [1, 2])
            #expect(port.statistics.discarded == 3)
            #expect(port.statistics.delivered == 2)
            #expect(!loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)), "the invalidated port left the mode")
        }
    }

    @Test func portAndDelegateDeallocatedWithMessagesInFlightAreSafe() throws {
        let thread = try RunLoopThread(name: "dealloc")
        defer { thread.stop() }
        weak var weakPort: MessagePort?
        do {
            let port = MessagePort(queueLimit: 100)
            weakPort = port
            final class Delegate: MessagePortDelegate { func handleMessage(_ message: MessagePort.Message) {} }
            var delegate: Delegate? = Delegate()
            port.delegate = delegate
            thread.loop.add(port, forMode: .common)
            for i in 0..<100 { port.send(before: Date(), msgid: UInt32(i), components: [Data(count: 64)]) }
            delegate = nil
            _ = delegate
            port.invalidate()
        }
        try thread.loop.performAndWait {}
        try thread.loop.performAndWait {}
        #expect(weakPort == nil, "the loop must not keep an invalidated port alive")
    }
}
