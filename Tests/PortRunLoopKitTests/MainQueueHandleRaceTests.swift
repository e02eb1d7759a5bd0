import Foundation
@testable import PortRunLoopKit
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The main loop watches libdispatch's main-queue handle, which `dispatchMain()` closes when the
/// main thread enters it (the handle then reads -1). A thread making the main loop meanwhile must
/// end with nothing watched, whichever side of the watch the handle went: never a crash, and never
/// a source left on a number the process may reuse. The race is replayed with a stand-in for
/// `_dispatch_get_main_queue_handle_4CF` on a loop of its own.
@Suite(.timeLimit(.minutes(1))) struct MainQueueHandleRaceTests {
    /// Answers `first` once, then -1 (disposed). Used by the test's thread only.
    private final class Handle: @unchecked Sendable {
        private var answers: [Int32]
        private(set) var asked = 0
        init(first: Int32) { answers = [first] }
        func next() -> Int32 {
            asked += 1
            return answers.isEmpty ? -1 : answers.removeFirst()
        }
    }

    private func watchedSources(of loop: PortRunLoop) throws -> Int {
        try loop.performAndWait { loop.fdSources.count }
    }

    @Test func aHandleClosedBeforeItIsWatchedLeavesNothingWatched() throws {
        let thread = try RunLoopThread(name: "handle-closed-before")
        defer { thread.stop() }
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        close(ends[0])
        close(ends[1]) // the number the handle had is not open any more
        let handle = Handle(first: ends[0])
        _ = thread.loop.drainingMainDispatchQueue(handle: handle.next)
        #expect(handle.asked == 2) // asked again after the refused watch, which it did not crash on
        #expect(try watchedSources(of: thread.loop) == 0)
    }

    @Test func aHandleClosedRightAfterItIsWatchedIsUnwatched() throws {
        let thread = try RunLoopThread(name: "handle-closed-after")
        defer { thread.stop() }
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let handle = Handle(first: ends[0])
        _ = thread.loop.drainingMainDispatchQueue(handle: handle.next)
        #expect(handle.asked == 2)
        #expect(try watchedSources(of: thread.loop) == 0)
    }

    @Test func aHandleThatStaysIsWatched() throws {
        let thread = try RunLoopThread(name: "handle-stays")
        defer { thread.stop() }
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        _ = thread.loop.drainingMainDispatchQueue(handle: { ends[0] })
        #expect(try watchedSources(of: thread.loop) == 1)
    }
}
