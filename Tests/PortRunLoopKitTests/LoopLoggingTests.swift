import Foundation
import Logging
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// What a loop and its `RunLoopThread` log: start and stop, discarded work, refused fd sources.
@Suite(.timeLimit(.minutes(1))) struct LoopLoggingTests {
    @Test func aRunLoopThreadLogsItsStartAndStopAtDebug() throws {
        let recorder = LogRecorder()
        let thread = try RunLoopThread(name: "log-thread", logger: recorder.logger)
        thread.stop()
        let entries = recorder.entries
        #expect(entries.count == 2)
        #expect(entries.allSatisfy { $0.level == .debug && $0[LogKeys.loop] == "log-thread" })
        #expect(entries.last?.message == "RunLoopThread stopped")
    }

    @Test func blocksDiscardedAtShutdownAreLoggedWithTheirCount() throws {
        let recorder = LogRecorder()
        let thread = try RunLoopThread(name: "log-discard", logger: recorder.logger)
        let never = RunLoop.Mode("log-discard.never-run")
        for _ in 0..<4 { #expect(thread.loop.perform(inModes: [never]) {}) }
        thread.stop()
        let discards = recorder.entries.filter { $0[LogKeys.discarded] != nil }
        #expect(discards.count == 1)
        #expect(discards.first?.level == .notice)
        #expect(discards.first?[LogKeys.discarded] == "4")
        #expect(discards.first?[LogKeys.loop] == "log-discard")
    }

    @Test func aRefusedWatchLogsAWarningWithTheFileDescriptor() throws {
        let recorder = LogRecorder()
        let thread = try RunLoopThread(name: "log-watch")
        defer { thread.stop() }
        thread.loop.logger = recorder.logger // set from another thread than the loop's
        let fd = open("/dev/null", O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        #expect(throws: PortRunLoopError.self) {
            _ = try thread.loop.watch(fileDescriptor: fd, for: .read) { _ in }
        }
        let entries = recorder.entries
        #expect(entries.count == 1)
        #expect(entries.first?.level == .warning)
        #expect(entries.first?[LogKeys.fileDescriptor] == "\(fd)")
        #expect(entries.first?[LogKeys.loop] == "log-watch")
        #expect(entries.first?[LogKeys.error] != nil)
    }
}
