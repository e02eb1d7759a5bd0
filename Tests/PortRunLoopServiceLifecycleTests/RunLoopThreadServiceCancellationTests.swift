import Foundation
import PortRunLoopKit
import PortRunLoopServiceLifecycle
import ServiceLifecycle
import Testing
import PortRunLoopTestSupport

/// Cancelling the task that runs a `RunLoopThreadService` (directly, or through its group) stops
/// the thread by its stop rule, skips the drain, and `run()` returns without an error.
@Suite(.timeLimit(.minutes(1))) struct RunLoopThreadServiceCancellationTests {
    @Test func cancellingTheServicesTaskStopsTheThreadAfterItsQueuedWork() async throws {
        let thread = try RunLoopThread(name: "svc-cancel")
        let service = RunLoopThreadService(adopting: thread)
        let running = Task { try await service.run() }
        let ran = Recorder<Int>()
        parkUntilStopped(thread)
        for i in 0..<10 { thread.loop.perform { ran.append(i) } }
        running.cancel()
        try await running.value
        #expect(thread.isStopped)
        #expect(thread.loop.isShutDown)
        #expect(ran.values == Array(0..<10))
    }

    @Test func cancellingTheGroupStopsTheThread() async throws {
        let started = StartedThreads()
        let service = RunLoopThreadService(starting: { try started.start(name: "svc-group-cancel") })
        let group = makeGroup([service, WaitingService()])
        let running = Task { try await group.run() }
        let thread = try #require(await started.next())
        running.cancel()
        try await running.value
        #expect(thread.isStopped)
        #expect(thread.loop.isShutDown)
    }

    /// The loop never goes idle here (a block that queues itself again), so a drain would last its
    /// whole timeout (two minutes): returning well before it shows the drain was skipped. (Alone
    /// the test takes milliseconds; beside the suite's blocking tests, the wait for a cooperative
    /// thread to run the task on can take tens of seconds.)
    @Test func cancellationSkipsTheDrain() async throws {
        let thread = try RunLoopThread(name: "svc-busy")
        let service = RunLoopThreadService(adopting: thread, drain: .untilIdle(timeout: .seconds(120)))
        let clock = ContinuousClock()
        let start = clock.now
        let running = Task { try await service.run() }
        let turns = Locked(0)
        Requeuing.start(on: thread.loop) { turns.withLock { $0 += 1 } }
        running.cancel()
        try await running.value
        #expect(clock.now - start < .seconds(90), "the drain should have been skipped, not waited out")
        #expect(thread.isStopped)
        #expect(thread.loop.isShutDown)
        #expect(turns.withLock { $0 } >= 1)
    }
}

/// A block that queues itself again each time it runs, until its loop shuts down (`perform` then
/// returns false): a loop that is never idle.
enum Requeuing {
    static func start(on loop: PortRunLoop, _ body: @escaping @Sendable () -> Void) {
        loop.perform { body(); start(on: loop, body) }
    }
}
