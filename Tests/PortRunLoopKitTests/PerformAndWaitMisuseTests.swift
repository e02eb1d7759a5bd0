import Foundation
import PortRunLoopKit
import PortRunLoopStressEngine
import Synchronization
import Testing
import PortRunLoopTestSupport

/// performAndWait misuse: dead targets, throwing bodies, zero and negative timeouts.
/// The outcome is always a value, the body's own error, or a typed `PortRunLoopError` — never a hang.
@Suite(.timeLimit(.minutes(1))) struct PerformAndWaitMisuseTests {
    struct BodyError: Error, Equatable { let code: Int }

    @Test func aThrowingBodyRethrowsItsOwnErrorAndTheLoopKeepsWorking() throws {
        let thread = try RunLoopThread(name: "thrower")
        defer { thread.stop() }
        for code in 0..<20 {
            #expect(throws: BodyError(code: code)) {
                try thread.loop.performAndWait { () throws -> Int in throw BodyError(code: code) }
            }
        }
        // A PortRunLoopError thrown by the body itself comes back unchanged, too.
        #expect(throws: PortRunLoopError.invalidated) {
            try thread.loop.performAndWait { () throws -> Void in throw PortRunLoopError.invalidated }
        }
        #expect(try thread.loop.performAndWait { 7 } == 7)
    }

    @Test func aThrowingBodyInsideANestedCallReachesTheOriginalCaller() throws {
        let a = try RunLoopThread(name: "outer")
        let b = try RunLoopThread(name: "inner")
        defer { a.stop(); b.stop() }
        let loopB = b.loop
        #expect(throws: BodyError(code: 2)) {
            try a.loop.performAndWait {
                try loopB.performAndWait { () throws -> Void in throw BodyError(code: 2) }
            }
        }
    }

    @Test func aTargetWhoseThreadExitsWhileTheCallIsQueuedFailsTheCaller() throws {
        // A plain thread owns a loop, is held busy, and exits without running its loop again: the
        // caller already waiting must get loopShutDown, not hang.
        let loopBox = Locked<PortRunLoop?>(nil)
        let ready = Signal()
        let exit = Signal()
        let owner = JoinableThread(name: "exiting-owner") {
            loopBox.withLock { $0 = PortRunLoop.current }
            ready.fire()
            _ = exit.wait(seconds: 60)
        }
        #expect(ready.wait())
        let loop = try #require(loopBox.withLock { $0 })
        let ran = CallCounter()
        let outcome = Locked<Result<Int, any Error>?>(nil)
        let callerStarted = Signal()
        let caller = JoinableThread(name: "caller") {
            callerStarted.fire()
            let r = Result { try loop.performAndWait { ran.increment(); return 1 } }
            outcome.withLock { $0 = r }
        }
        #expect(callerStarted.wait())
        exit.fire()
        #expect(owner.join(timeout: 20))
        #expect(caller.join(timeout: 20), "performAndWait hung on a loop whose thread exited")
        let result = try #require(outcome.withLock { $0 })
        // It either slipped in before the exit (impossible here: the owner never ran its loop) or failed.
        #expect(throws: PortRunLoopError.loopShutDown) { try result.get() }
        #expect(ran.value == 0)
        #expect(loop.isShutDown)
        loopBox.withLock { $0 = nil }
    }

    @Test func zeroAndNegativeTimeoutsWithdrawACallThatCannotStartAtOnce() throws {
        let thread = try RunLoopThread(name: "zero-timeout")
        defer { thread.stop() }
        let release = holdLoop(thread)
        let ran = CallCounter()
        for timeout in [Duration.zero, .seconds(-5), .nanoseconds(1)] {
            #expect(throws: PortRunLoopError.timedOut) {
                try thread.loop.performAndWait(timeout: timeout) { ran.increment() }
            }
        }
        release.fire()
        try thread.loop.performAndWait {}
        #expect(ran.value == 0, "a withdrawn call ran anyway")
    }

    @Test func performOnADeadLoopReturnsFalseAndNeverRuns() throws {
        let loop = try JoinableThread.run { PortRunLoop.current }
        let ran = CallCounter()
        #expect(!loop.perform { ran.increment() })
        #expect(throws: PortRunLoopError.loopShutDown) { try loop.performAndWait(timeout: .seconds(1)) { ran.increment() } }
        #expect(ran.value == 0)
    }
}
