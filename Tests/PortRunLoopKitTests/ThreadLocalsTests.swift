import Foundation
@testable import PortRunLoopKit
import Testing
import PortRunLoopStressEngine
import PortRunLoopTestSupport

/// The per-thread values the hand-off paths read from C thread-locals (``ThreadLocals``): each
/// thread sees its own loop and its own running-job mark, and a thread's loop is forgotten when
/// the thread exits.
@Suite(.timeLimit(.minutes(1))) struct ThreadLocalsTests {
    @Test func eachThreadSeesOnlyItsOwnLoop() throws {
        let seen = Locked<[String]>([])
        try JoinableThread.run {
            let loop = PortRunLoop.current
            let found = PortRunLoop.existingForCurrentThread()
            seen.withLock { $0.append(found === loop ? "own" : "other") }
            try? JoinableThread.run {
                // A thread without a loop of its own sees none, whatever its creator has.
                seen.withLock { $0.append(PortRunLoop.existingForCurrentThread() == nil ? "none" : "leaked") }
            }
            seen.withLock { $0.append(loop.isCurrentThread ? "current" : "not current") }
        }
        #expect(seen.withLock { $0 } == ["own", "none", "current"])
    }

    @Test func anExitedThreadsLoopIsShutDownAndForgotten() throws {
        let loop = Locked<PortRunLoop?>(nil)
        try JoinableThread.run { loop.withLock { $0 = PortRunLoop.current } }
        let exited = try #require(loop.withLock { $0 })
        #expect(exited.isShutDown, "the thread's exit shut its loop down")
        #expect(!exited.isCurrentThread)
        // A new thread (glibc may hand it the same pthread_t) starts with no loop and gets a new one.
        let fresh = Locked<(hadNone: Bool, isNew: Bool)?>(nil)
        try JoinableThread.run {
            let hadNone = PortRunLoop.existingForCurrentThread() == nil
            let isNew = PortRunLoop.current !== exited
            fresh.withLock { $0 = (hadNone, isNew) }
        }
        let answer = fresh.withLock { $0 }
        #expect(answer?.hadNone == true && answer?.isNew == true)
    }

    @Test func theRunningJobMarkIsPerThreadAndRestored() throws {
        let loop = try RunLoopThread(name: "thread-locals.jobs")
        defer { loop.stop() }
        #expect(!RunningExecutorJob.isRunningAny)
        let marks = Locked<[Bool]>([])
        ThreadLocals.runningJob = Unmanaged.passUnretained(loop.loop).toOpaque()
        marks.withLock { $0.append(RunningExecutorJob.isRunning(for: loop.loop)) }
        try JoinableThread.run { marks.withLock { $0.append(RunningExecutorJob.isRunningAny) } }
        ThreadLocals.runningJob = nil
        marks.withLock { $0.append(RunningExecutorJob.isRunningAny) }
        #expect(marks.withLock { $0 } == [true, false, false])
    }
}
