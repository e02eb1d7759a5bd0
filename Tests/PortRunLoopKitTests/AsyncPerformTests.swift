import Foundation
import PortRunLoopKit
import Synchronization
import Testing

private struct BodyError: Error, Equatable {}

/// `try await loop.submit { … }`: value and error, cancellation before and after the start,
/// shut-down loops, FIFO with perform, inline on the loop's own thread.
@Suite(.timeLimit(.minutes(1))) struct AsyncPerformTests {
    @Test func returnsTheBodysValueFromTheLoopThread() async throws {
        let thread = try RunLoopThread(name: "submit-value")
        defer { thread.stop() }
        let name = try await thread.loop.submit { Thread.current.name }
        #expect(name == "submit-value")
        let onLoop = try await thread.loop.submit { thread.loop.isCurrentThread }
        #expect(onLoop)
    }

    @Test func rethrowsTheBodysError() async throws {
        let thread = try RunLoopThread(name: "submit-error")
        defer { thread.stop() }
        await #expect(throws: BodyError()) {
            try await thread.loop.submit { () throws -> Int in throw BodyError() }
        }
    }

    @Test func cancelledBeforeStartNeverRuns() async throws {
        let target = try RunLoopThread(name: "submit-target")
        let caller = try RunLoopThread(name: "submit-caller")
        defer { target.stop(); caller.stop() }
        let ran = Atomic<Bool>(false)
        let gate = ConcurrencyGate()
        gate.close(on: target.loop) // the target's thread is busy: the body cannot start
        // The calling task runs on `caller`'s loop, so once a perform queued behind its first job
        // has run, that job has run up to its suspension: the body is queued on `target`.
        let task = Task(executorPreference: caller.loop.taskExecutor) {
            try await target.loop.submit { ran.store(true, ordering: .relaxed) }
        }
        try caller.loop.performAndWait {}
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        gate.open()
        try target.loop.performAndWait {} // everything queued before this has been handled
        #expect(ran.load(ordering: .relaxed) == false)
    }

    @Test func alreadyCancelledTaskThrowsWithoutRunning() async throws {
        let thread = try RunLoopThread(name: "submit-precancelled")
        defer { thread.stop() }
        let ran = Atomic<Bool>(false)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await thread.loop.submit { ran.store(true, ordering: .relaxed) }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        try thread.loop.performAndWait {}
        #expect(ran.load(ordering: .relaxed) == false)
    }

    @Test func startedBodyRunsToCompletionDespiteCancellation() async throws {
        let thread = try RunLoopThread(name: "submit-started")
        let caller = try RunLoopThread(name: "submit-started-caller")
        defer { thread.stop(); caller.stop() }
        let started = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        // The task runs on its own thread, not the cooperative pool: this test blocks a pool thread
        // in `started.wait`, and on a 2-core machine the pool has only two.
        let task = Task(executorPreference: caller.loop.taskExecutor) {
            try await thread.loop.submit { () -> Int in
                started.signal()
                _ = proceed.wait(timeout: .now() + 50)
                return 7
            }
        }
        #expect(started.wait(timeout: .now() + 50) == .success)
        task.cancel()
        proceed.signal()
        #expect(try await task.value == 7)
    }

    @Test func shutDownLoopThrowsLoopShutDown() async throws {
        let thread = try RunLoopThread(name: "submit-dead")
        thread.stop()
        await #expect(throws: PortRunLoopError.loopShutDown) {
            try await thread.loop.submit { 1 }
        }
    }

    @Test func loopShuttingDownBeforeStartFailsTheCall() async throws {
        let bare = BareLoopThread() // never runs its loop
        let caller = try RunLoopThread(name: "submit-caller2")
        defer { caller.stop() }
        let ran = Atomic<Bool>(false)
        let task = Task(executorPreference: caller.loop.taskExecutor) {
            try await bare.loop.submit { ran.store(true, ordering: .relaxed) }
        }
        try caller.loop.performAndWait {} // the body is queued on the bare loop now
        bare.exit()
        await #expect(throws: PortRunLoopError.loopShutDown) { try await task.value }
        #expect(ran.load(ordering: .relaxed) == false)
    }

    @Test func sharesTheFIFOWithPerform() async throws {
        let target = try RunLoopThread(name: "submit-fifo")
        let caller = try RunLoopThread(name: "submit-fifo-caller")
        defer { target.stop(); caller.stop() }
        let log = ConcurrencyLog<Int>()
        let gate = ConcurrencyGate()
        gate.close(on: target.loop)
        target.loop.perform { log.append(1) }
        let task = Task(executorPreference: caller.loop.taskExecutor) {
            try await target.loop.submit { log.append(2) }
        }
        try caller.loop.performAndWait {}
        target.loop.perform { log.append(3) }
        gate.open()
        try await task.value
        try target.loop.performAndWait {}
        #expect(log.values == [1, 2, 3])
    }

    @Test func onTheLoopsOwnThreadRunsInline() async throws {
        let thread = try RunLoopThread(name: "submit-inline")
        defer { thread.stop() }
        let loop = thread.loop
        let result = try await Task(executorPreference: loop.taskExecutor) { () async throws -> [String] in
            let log = ConcurrencyLog<String>()
            loop.perform { log.append("queued-perform") }
            // Inline: runs before the perform queued just before it.
            try await loop.submit { log.append("submitted") }
            return log.values
        }.value
        #expect(result == ["submitted"])
    }
}
