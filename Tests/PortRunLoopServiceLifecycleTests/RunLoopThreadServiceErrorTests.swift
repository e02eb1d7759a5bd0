import Foundation
import PortRunLoopKit
import PortRunLoopServiceLifecycle
import ServiceLifecycle
import Testing
import PortRunLoopTestSupport

/// What a `RunLoopThreadService` reports as an error: a thread that could not start, a thread that
/// ended before the service was asked to stop it, and a second run.
@Suite(.timeLimit(.minutes(1))) struct RunLoopThreadServiceErrorTests {
    @Test func aFailedStartIsThrownByTheGroupAsItIs() async {
        let service = RunLoopThreadService(starting: { throw PortRunLoopError.threadCreationFailed(errno: EAGAIN) })
        let other = WaitingService()
        let group = makeGroup([service, other])
        await #expect(throws: PortRunLoopError.threadCreationFailed(errno: EAGAIN)) { try await group.run() }
        #expect(service.thread == nil)
        #expect(service.description == "RunLoopThreadService(not started)")
    }

    @Test func aThreadStoppedByItsHolderIsAnError() async throws {
        let thread = try RunLoopThread(name: "svc-stolen")
        let group = makeGroup([RunLoopThreadService(adopting: thread)])
        let running = Task { try await group.run() }
        // Whether the service has started yet or not, it notices (and reports) the end.
        thread.stop()
        await #expect(throws: RunLoopThreadServiceError.threadEndedUnexpectedly(threadName: "svc-stolen")) {
            try await running.value
        }
    }

    @Test func aThreadThatStopsItselfIsAnError() async throws {
        let thread = try RunLoopThread(name: "svc-self-stop")
        let group = makeGroup([RunLoopThreadService(adopting: thread)])
        let running = Task { try await group.run() }
        thread.loop.perform { thread.stop() } // ends the loop from its own thread
        await #expect(throws: RunLoopThreadServiceError.threadEndedUnexpectedly(threadName: "svc-self-stop")) {
            try await running.value
        }
        #expect(thread.isStopped)
        #expect(thread.loop.isShutDown)
    }

    @Test func anAdoptedThreadThatIsAlreadyStoppedIsAnError() async throws {
        let thread = try RunLoopThread(name: "svc-dead")
        thread.stop()
        let service = RunLoopThreadService(adopting: thread)
        await #expect(throws: RunLoopThreadServiceError.threadEndedUnexpectedly(threadName: "svc-dead")) {
            try await service.run()
        }
    }

    /// The documented recipe: with `failureTerminationBehavior: .gracefullyShutdownGroup`, a thread
    /// that ends early shuts the other services down gracefully, and the group still reports why.
    @Test func anEarlyEndCanShutTheGroupDownGracefully() async throws {
        let thread = try RunLoopThread(name: "svc-early")
        let others = Recorder<String>()
        let configuration = ServiceGroupConfiguration(
            services: [
                .init(service: WaitingService(onShutdown: { others.append("shut down gracefully") })),
                .init(service: RunLoopThreadService(adopting: thread), failureTerminationBehavior: .gracefullyShutdownGroup),
            ],
            logger: quietLogger)
        let group = ServiceGroup(configuration: configuration)
        let running = Task { try await group.run() }
        thread.stop()
        await #expect(throws: RunLoopThreadServiceError.threadEndedUnexpectedly(threadName: "svc-early")) {
            try await running.value
        }
        #expect(others.values == ["shut down gracefully"])
    }

    @Test func aServiceRunsOnce() async throws {
        let service = RunLoopThreadService(name: "svc-once")
        let group = makeGroup([service])
        await group.triggerGracefulShutdown()
        try await group.run()
        await #expect(throws: RunLoopThreadServiceError.alreadyRun) { try await service.run() }
        #expect(service.thread?.isStopped == true)
    }

    @Test func errorsDescribeThemselves() {
        #expect(RunLoopThreadServiceError.threadEndedUnexpectedly(threadName: "io").description
            == "the RunLoopThread 'io' ended before the service was asked to stop it")
        #expect(RunLoopThreadServiceError.alreadyRun.description.contains("already run"))
    }
}
