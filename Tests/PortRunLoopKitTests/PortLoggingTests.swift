import Foundation
import Logging
import PortRunLoopKit
import Synchronization
import Testing
import PortRunLoopTestSupport

/// What a `MessagePort` logs: discarded messages once per invalidation, rejected sends aggregated.
@Suite(.timeLimit(.minutes(1))) struct PortLoggingTests {
    @Test func invalidatingAPortWithQueuedMessagesLogsOneEntryWithTheCount() throws {
        let recorder = LogRecorder()
        let thread = try RunLoopThread(name: "log-inval")
        defer { thread.stop() }
        // Keep the loop busy so that the messages stay queued.
        let release = holdLoop(thread)
        let port = MessagePort(queueLimit: 10, logger: recorder.logger)
        port.setHandler { _ in }
        thread.loop.add(port, forMode: .common)
        for id in 0..<3 { #expect(port.send(before: Date(), msgid: UInt32(id))) }
        port.invalidate()
        port.invalidate() // idempotent: no second entry
        release.fire()
        try thread.loop.performAndWait {}

        let entries = recorder.entries
        #expect(entries.count == 1)
        let entry = try #require(entries.first)
        #expect(entry.level == .notice)
        #expect(entry[LogKeys.discarded] == "3")
        #expect(entry[LogKeys.loop] == "log-inval")
        #expect(entry[LogKeys.port] == "\(port)")
        #expect(port.statistics.discarded == 3)
    }

    @Test func invalidatingAnEmptyPortLogsNothing() {
        let recorder = LogRecorder()
        let port = MessagePort(logger: recorder.logger)
        port.invalidate()
        #expect(recorder.entries.isEmpty)
    }

    @Test func rejectedSendsToAFullPortAreAggregated() throws {
        let recorder = LogRecorder()
        let port = MessagePort(queueLimit: 1, logger: recorder.logger) // in no loop: nothing drains it
        defer { port.invalidate() }
        #expect(port.send(before: Date()))
        let rejections = 3 * MessagePort.rejectionLogInterval + 5
        for _ in 0..<rejections { #expect(!port.send(before: Date())) }

        let entries = recorder.entries
        #expect(entries.count == 4, "the first rejection, then one per \(MessagePort.rejectionLogInterval)")
        #expect(entries.allSatisfy { $0.level == .warning })
        #expect(entries.map { $0[LogKeys.rejected] } == ["1", "1024", "2048", "3072"])
        #expect(entries.last?[LogKeys.rejectedSinceLastLog] == "1024")
        #expect(entries.last?[LogKeys.queueLimit] == "1")
        #expect(port.statistics.rejected == rejections)
    }

    @Test func aPortWithoutALoggerLogsToItsLoops() throws {
        let recorder = LogRecorder()
        let thread = try RunLoopThread(name: "log-inherit", logger: recorder.logger)
        defer { thread.stop() }
        let release = holdLoop(thread)
        let port = MessagePort()
        port.setHandler { _ in }
        thread.loop.add(port, forMode: .common)
        #expect(port.send(before: Date()))
        port.invalidate()
        release.fire()
        try thread.loop.performAndWait {}
        let discards = recorder.entries.filter { $0[LogKeys.discarded] != nil }
        #expect(discards.count == 1)
        #expect(discards.first?[LogKeys.loop] == "log-inherit")
    }
}
