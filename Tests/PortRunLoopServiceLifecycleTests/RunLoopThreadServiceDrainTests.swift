import Foundation
import PortRunLoopKit
import PortRunLoopServiceLifecycle
import ServiceLifecycle
import Testing
import PortRunLoopTestSupport

/// `RunLoopThreadService.Drain`: `.queuedWork` stops at once (the stop rule), `.untilIdle` first
/// keeps the loop running until a round trip finds it idle, or until its timeout.
@Suite(.timeLimit(.minutes(1))) struct RunLoopThreadServiceDrainTests {
    /// A chain: each block queues the next one, started by a service that shuts down just before
    /// the thread's service (a group stops its services in reverse order). Whatever the timing, one
    /// link is always queued ahead of the drain's next round trip until the chain ends, so the drain
    /// sees the loop idle only after the last link ran. (Without the drain, the stop rule handles the
    /// links queued before the stop, and the chain is cut off wherever the stop lands.)
    @Test func untilIdleLetsAChainOfWorkFinish() async throws {
        let thread = try RunLoopThread(name: "svc-drain")
        let links = Locked(0)
        let starter = WaitingService(onShutdown: {
            Chain.start(on: thread.loop, links: 20_000) { links.withLock { $0 += 1 } }
        })
        let group = makeGroup([RunLoopThreadService(adopting: thread, drain: .untilIdle(timeout: .seconds(50))), starter])
        await group.triggerGracefulShutdown()
        try await group.run()
        #expect(thread.isStopped)
        #expect(links.withLock { $0 } == 20_000)
    }

    @Test func untilIdleEndsAtItsTimeoutWhenTheLoopStaysBusy() async throws {
        let thread = try RunLoopThread(name: "svc-never-idle")
        let group = makeGroup([RunLoopThreadService(adopting: thread, drain: .untilIdle(timeout: .milliseconds(100)))])
        Requeuing.start(on: thread.loop) {}
        await group.triggerGracefulShutdown()
        try await group.run()
        #expect(thread.isStopped)
        #expect(thread.loop.isShutDown)
    }

    @Test func drainsDescribeThemselves() {
        #expect(RunLoopThreadService.Drain.queuedWork.description == "queuedWork")
        #expect(RunLoopThreadService.Drain.untilIdle(timeout: .seconds(2)).description == "untilIdle(timeout: 2.0 seconds)")
        #expect(RunLoopThreadService.Drain.untilIdle(timeout: .seconds(2)) != .queuedWork)
    }
}

/// `links` blocks run one after another, each queued by the one before it.
enum Chain {
    static func start(on loop: PortRunLoop, links: Int, _ body: @escaping @Sendable () -> Void) {
        guard links > 0 else { return }
        loop.perform { body(); start(on: loop, links: links - 1, body) }
    }
}
