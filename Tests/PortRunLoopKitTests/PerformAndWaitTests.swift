import Foundation
import PortRunLoopKit
import Synchronization
import Testing
import PortRunLoopStressEngine
import PortRunLoopTestSupport

/// performAndWait: inline, cross-thread, results, rethrown errors, dead targets, timeouts, cycles.
@Suite(.timeLimit(.minutes(1))) struct PerformAndWaitTests {
    struct Boom: Error, Equatable { let code: Int }

    @Test func onTheLoopsOwnThreadItRunsInline() throws {
        try onFreshThread(name: "inline") {
            let loop = PortRunLoop.current
            let depth = Locked(0)
            loop.perform { depth.withLock { $0 += 1 } } // queued, not yet run
            let value = try loop.performAndWait { () -> Int in
                // Ran at once, before the queued perform.
                #expect(depth.withLock { $0 } == 0)
                return 7
            }
            #expect(value == 7)
        }
    }

    @Test func crossThreadReturnsTheValueComputedOnTheTargetThread() throws {
        let thread = try RunLoopThread(name: "target")
        defer { thread.stop() }
        let (name, sum) = try thread.loop.performAndWait { (Thread.current.name ?? "", (1...10).reduce(0, +)) }
        #expect(name == "target")
        #expect(sum == 55)
    }

    @Test func errorsAreRethrownToTheCaller() throws {
        let thread = try RunLoopThread(name: "thrower")
        defer { thread.stop() }
        #expect(throws: Boom(code: 3)) {
            try thread.loop.performAndWait { throw Boom(code: 3) }
        }
        // The loop survives a throwing body.
        #expect(try thread.loop.performAndWait { 1 } == 1)
    }

    @Test func deadTargetFailsAtOnceWithATypedError() throws {
        let thread = try RunLoopThread(name: "short-lived")
        let loop = thread.loop
        thread.stop()
        #expect(loop.isShutDown)
        #expect(throws: PortRunLoopError.loopShutDown) { try loop.performAndWait { 1 } }
        #expect(!loop.perform {})
    }

    @Test func targetWhoseThreadExitedFailsAtOnce() throws {
        // A plain pthread (not a RunLoopThread) that makes its loop and exits; joined, so its
        // thread-exit cleanup has certainly run.
        let box = Locked<PortRunLoop?>(nil)
        try JoinableThread.run { box.withLock { $0 = PortRunLoop.current } }
        let loop = try #require(box.withLock { $0 })
        #expect(loop.isShutDown)
        #expect(throws: PortRunLoopError.loopShutDown) { try loop.performAndWait { 1 } }
    }

    @Test func callsQueuedWhenTheLoopShutsDownFailInsteadOfHanging() throws {
        let thread = try RunLoopThread(name: "dying")
        let release = Signal()
        let holding = Signal()
        thread.loop.perform { holding.fire(); _ = release.wait() }
        #expect(holding.wait())
        // Queued behind the blocker while the loop is about to be stopped.
        let outcome = Locked<Result<Int, any Error>?>(nil)
        let done = Signal()
        Thread.detachNewThread {
            let r = Result { try thread.loop.performAndWait(timeout: .seconds(30)) { 1 } }
            outcome.withLock { $0 = r }
            done.fire()
        }
        // Stop: the blocker finishes, the queued call runs (queued before stop) — or, if the stop
        // raced ahead of it, it fails with loopShutDown. Either way the caller returns.
        Thread.detachNewThread { release.fire() }
        thread.stop()
        #expect(done.wait())
        let result = try #require(outcome.withLock { $0 })
        switch result {
        case .success(let v): #expect(v == 1)
        case .failure(let e): #expect(e as? PortRunLoopError == .loopShutDown)
        }
    }

    @Test func timeoutWithdrawsACallThatHasNotStarted() throws {
        let thread = try RunLoopThread(name: "busy")
        defer { thread.stop() }
        let release = Signal()
        let holding = Signal()
        thread.loop.perform { holding.fire(); _ = release.wait() }
        #expect(holding.wait())
        let ran = Locked(false)
        #expect(throws: PortRunLoopError.timedOut) {
            try thread.loop.performAndWait(timeout: .milliseconds(50)) { ran.withLock { $0 = true } }
        }
        release.fire()
        try thread.loop.performAndWait {} // everything queued before this has been handled
        #expect(ran.withLock { $0 } == false, "a withdrawn call must never run")
    }

    @Test func twoLoopThreadsWaitingOnEachOtherDoNotDeadlock() throws {
        let a = try RunLoopThread(name: "A")
        let b = try RunLoopThread(name: "B")
        defer { a.stop(); b.stop() }
        let bothWaiting = DispatchGroup()
        bothWaiting.enter(); bothWaiting.enter()
        let results = Recorder<String>()
        let done = DispatchGroup()
        done.enter(); done.enter()
        a.loop.perform {
            bothWaiting.leave(); _ = bothWaiting.wait(timeout: .now() + 10)
            // Bounded, so that a deadlock fails the test instead of hanging the thread's stop.
            let r = try? b.loop.performAndWait(timeout: .seconds(10)) { "B ran for A on \(Thread.current.name ?? "")" }
            results.append(r ?? "fail")
            done.leave()
        }
        b.loop.perform {
            bothWaiting.leave(); _ = bothWaiting.wait(timeout: .now() + 10)
            // Bounded, so that a deadlock fails the test instead of hanging the thread's stop.
            let r = try? a.loop.performAndWait(timeout: .seconds(10)) { "A ran for B on \(Thread.current.name ?? "")" }
            results.append(r ?? "fail")
            done.leave()
        }
        #expect(done.wait(timeout: .now() + 20) == .success)
        #expect(Set(results.values) == ["B ran for A on B", "A ran for B on A"])
    }
}
