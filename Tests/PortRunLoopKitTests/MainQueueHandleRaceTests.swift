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
    private final class Handle {
        private var answers: [Int32]
        private(set) var asked = 0
        init(first: Int32) { answers = [first] }
        func next() -> Int32 {
            asked += 1
            return answers.isEmpty ? -1 : answers.removeFirst()
        }
    }

    /// Makes a loop, then a pipe (so that its numbers are not the loop's own), closed at once with
    /// `closingThePipeFirst`, and runs the main-queue drain's set-up on the loop with the stand-in
    /// `stand` makes from the pipe's read end; returns how many fd sources the loop watches then.
    private func watchedSources(closingThePipeFirst: Bool = false, stand: (Int32) -> () -> Int32) throws -> Int {
        let thread = try RunLoopThread(name: "main-queue-handle")
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            thread.stop()
            throw POSIXError(.EMFILE)
        }
        if closingThePipeFirst { close(ends[0]); close(ends[1]) }
        _ = thread.loop.drainingMainDispatchQueue(handle: stand(ends[0]))
        let watched = Result { try thread.loop.performAndWait { thread.loop.fdSources.count } }
        thread.stop() // before the pipe is closed: a source still watching it ends with the loop
        if !closingThePipeFirst { close(ends[0]); close(ends[1]) }
        return try watched.get()
    }

    @Test func aHandleClosedBeforeItIsWatchedLeavesNothingWatched() throws {
        var handle: Handle?
        // The number the handle had is not open any more when it is watched.
        let watched = try watchedSources(closingThePipeFirst: true) { fd in
            handle = Handle(first: fd)
            return handle!.next
        }
        #expect(watched == 0)
        #expect(handle?.asked == 2) // asked again after the refused watch, which it did not crash on
    }

    @Test func aHandleClosedRightAfterItIsWatchedIsUnwatched() throws {
        var handle: Handle?
        let watched = try watchedSources { fd in
            handle = Handle(first: fd)
            return handle!.next
        }
        #expect(watched == 0)
        #expect(handle?.asked == 2)
    }

    @Test func aHandleThatStaysIsWatched() throws {
        #expect(try watchedSources { fd in { fd } } == 1)
    }
}
