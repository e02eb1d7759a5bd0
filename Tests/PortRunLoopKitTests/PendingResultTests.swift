import Foundation
@testable import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// PendingResult: a one-shot result waited for in the package's one blocking wait — set from another
/// thread, bounded by a deadline, and, on a loop thread, waited for while serving the loop's
/// synchronous calls or only the mode its owner names.
@Suite(.timeLimit(.minutes(1))) struct PendingResultTests {
    @Test func aResultSetOnAnotherThreadEndsAPlainThreadsWait() throws {
        let pending = PendingResult<Int>(serving: .synchronousWait)
        let setter = try RunLoopThread(name: "pr-setter")
        defer { setter.stop() }
        setter.loop.perform { pending.finish(42) }
        #expect(pending.wait(until: System.monotonicSeconds() + 20) == 42)
        pending.finish(7) // the first result stays
        #expect(pending.result == 42)
    }

    @Test func theDeadlineEndsTheWaitWithNoResult() {
        let pending = PendingResult<Int>(serving: .synchronousWait)
        let start = System.monotonicSeconds()
        #expect(pending.wait(until: start + 0.05) == nil)
        #expect(System.monotonicSeconds() - start >= 0.05)
    }

    @Test func aLoopThreadServesSynchronousCallsWhileItWaits() throws {
        // The waiter's result is set by a thread that first needs a performAndWait on the waiter's
        // own loop: it completes only because the waiting thread serves that call (W4).
        let waiter = try RunLoopThread(name: "pr-waiter")
        let setter = try RunLoopThread(name: "pr-setter")
        defer { waiter.stop(); setter.stop() }
        let got = try waiter.loop.performAndWait { () -> Int? in
            let pending = PendingResult<Int>(serving: .synchronousWait)
            setter.loop.perform {
                let served = (try? waiter.loop.performAndWait { 5 }) ?? 0
                pending.finish(served + 1)
            }
            return pending.wait(until: System.monotonicSeconds() + 20)
        }
        #expect(got == 6)
    }

    @Test func aWaitInAnotherModeLeavesSynchronousCallsForLater() throws {
        // Waiting in a mode of its owner's, the loop runs only that mode: a performAndWait queued
        // before the wait began does not run in it (it would set the result), and runs after.
        let waiter = try RunLoopThread(name: "pr-mode-waiter")
        let caller = try RunLoopThread(name: "pr-caller")
        defer { waiter.stop(); caller.stop() }
        let order = Locked<[String]>([])
        let pending = Locked<PendingResult<Int>?>(nil)
        let made = Signal()
        let outcome = Locked<Int??>(nil)
        waiter.loop.perform {
            let result = PendingResult<Int>(serving: RunLoop.Mode("PendingResultTests.private"))
            pending.withLock { $0 = result }
            made.fire()
            // The caller's call is in this loop's inbox before the wait starts (the loop is busy
            // in this block, so it stays there).
            let end = System.monotonicSeconds() + 20
            while waiter.loop.inbox.withLock({ $0.work.isEmpty }), System.monotonicSeconds() < end { sched_yield() }
            let got = result.wait(until: System.monotonicSeconds() + 0.2)
            outcome.withLock { $0 = .some(got) }
            order.withLock { $0.append("wait ended") }
        }
        #expect(made.wait())
        let called = Signal()
        caller.loop.perform {
            try? waiter.loop.performAndWait {
                order.withLock { $0.append("call ran") }
                pending.withLock { $0 }?.finish(1)
            }
            called.fire()
        }
        #expect(called.wait())
        #expect(outcome.withLock { $0 } == .some(nil))
        #expect(order.withLock { $0 } == ["wait ended", "call ran"])
    }

    @Test func theAsyncFormSuspendsUntilTheResultIsSet() async throws {
        let pending = PendingResult<Int>(serving: .synchronousWait)
        let setter = try RunLoopThread(name: "pr-async-setter")
        defer { setter.stop() }
        async let got = pending.value()
        setter.loop.perform { pending.finish(9) }
        #expect(await got == 9)
        // Already set: returns at once.
        #expect(await pending.value() == 9)
    }

    @Test func cancellingTheWaitingTaskEndsItWithNoResult() async {
        let pending = PendingResult<Int>(serving: .synchronousWait)
        let task = Task { await pending.value() }
        task.cancel()
        #expect(await task.value == nil)
        // A result set after the cancellation is kept but comes too late for that wait.
        pending.finish(3)
        #expect(pending.result == 3)
    }
}
