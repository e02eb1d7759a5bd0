import Foundation
import Logging
import PortRunLoopKit
import Synchronization
import Testing
import PortRunLoopTestSupport

/// Nothing is logged per message or per perform, even with a logger that records every level.
@Suite(.timeLimit(.minutes(1))) struct HotPathLoggingTests {
    @Test func aBurstOfSendsAndPerformsLogsNothing() throws {
        let recorder = LogRecorder()
        let thread = try RunLoopThread(name: "log-burst", logger: recorder.logger)
        defer { thread.stop() }
        let port = MessagePort(queueLimit: 64, logger: recorder.logger)
        defer { port.invalidate() }
        let delivered = Atomic<Int>(0)
        let performed = Atomic<Int>(0)
        port.setHandler { _ in delivered.add(1, ordering: .relaxed) }
        thread.loop.add(port, forMode: .common)
        try thread.loop.performAndWait {}
        let before = recorder.entries.count // the thread's start

        let count = 10_000
        for id in 0..<count {
            #expect(port.send(before: .distantFuture, msgid: UInt32(truncatingIfNeeded: id)))
            #expect(thread.loop.perform { performed.add(1, ordering: .relaxed) })
        }
        let deadline = ContinuousClock.now + .seconds(20)
        while delivered.load(ordering: .relaxed) < count || performed.load(ordering: .relaxed) < count,
              ContinuousClock.now < deadline {
            try thread.loop.performAndWait {}
        }
        #expect(delivered.load(ordering: .relaxed) == count)
        #expect(performed.load(ordering: .relaxed) == count)
        #expect(recorder.entries.count - before == 0)
    }
}
