import Foundation
import PortRunLoopKit
import PortRunLoopServiceLifecycle
import ServiceLifecycle
import Testing
import PortRunLoopTestSupport

/// Graceful shutdown of a `ServiceGroup` stops the service's `RunLoopThread` by its stop rule —
/// everything queued before the stop is handled, then the loop shuts down — and `run()` returns
/// once the thread was joined.
@Suite(.timeLimit(.minutes(1))) struct RunLoopThreadServiceShutdownTests {
    @Test func gracefulShutdownStopsAnAdoptedThreadAfterTheWorkQueuedBeforeIt() async throws {
        let thread = try RunLoopThread(name: "svc-adopted")
        let service = RunLoopThreadService(adopting: thread)
        #expect(service.thread === thread)
        #expect(service.description == "RunLoopThreadService(svc-adopted)")
        let group = makeGroup([service])
        let running = Task { try await group.run() }

        let seen = Recorder<String>()
        let port = MessagePort(queueLimit: 16)
        port.setHandler { seen.append("message \($0.msgid)") }
        thread.loop.add(port, forMode: .common)
        parkUntilStopped(thread) // what follows stays queued until the stop
        for i in 0..<3 { #expect(thread.loop.perform { seen.append("perform \(i)") }) }
        for i in 0..<3 { #expect(port.send(before: Date(), msgid: UInt32(i))) }
        await group.triggerGracefulShutdown()
        try await running.value

        #expect(thread.isStopped)
        #expect(thread.loop.isShutDown)
        #expect(seen.values.filter { $0.hasPrefix("perform") } == ["perform 0", "perform 1", "perform 2"])
        #expect(seen.values.filter { $0.hasPrefix("message") } == ["message 0", "message 1", "message 2"])
        #expect(!port.isValid)
    }

    @Test func gracefulShutdownStopsAThreadTheServiceStarted() async throws {
        let started = StartedThreads()
        let service = RunLoopThreadService(starting: { try started.start(name: "svc-started") })
        #expect(service.thread == nil)
        let group = makeGroup([service])
        let running = Task { try await group.run() }

        let thread = try #require(await started.next())
        // The service records the thread once its starting closure has returned, which may be just
        // after the closure handed it to us: wait for that (bounded).
        let deadline = ContinuousClock.now + .seconds(10)
        while service.thread == nil && ContinuousClock.now < deadline { await Task.yield() }
        #expect(service.thread === thread)
        #expect(service.description == "RunLoopThreadService(svc-started)")
        #expect(try await thread.loop.submit { Thread.current.name } == "svc-started")
        let ran = Recorder<Int>()
        parkUntilStopped(thread)
        for i in 0..<100 { thread.loop.perform { ran.append(i) } }
        await group.triggerGracefulShutdown()
        try await running.value

        #expect(thread.isStopped)
        #expect(thread.loop.isShutDown)
        #expect(ran.values == Array(0..<100))
        #expect(service.thread === thread, "the thread stays readable after run() returned")
    }

    @Test func aNamedServiceStartsItsThreadWhenItRunsAndStopsIt() async throws {
        let service = RunLoopThreadService(name: "svc-named")
        #expect(service.thread == nil, "no thread before the service runs")
        #expect(service.description == "RunLoopThreadService(svc-named)")
        #expect(service.drain == .queuedWork)
        let group = makeGroup([service])
        await group.triggerGracefulShutdown() // remembered: the group starts, then shuts down
        try await group.run()
        let thread = try #require(service.thread)
        #expect(thread.name == "svc-named")
        #expect(thread.isStopped)
        #expect(thread.loop.isShutDown)
    }

    /// A group shuts its services down in reverse order: a service listed after the thread's
    /// service has finished its own shutdown — including work it queued on the thread then —
    /// before the thread is stopped.
    @Test func servicesListedAfterItStillReachTheThreadWhileTheyShutDown() async throws {
        let thread = try RunLoopThread(name: "svc-ordered")
        let ran = Recorder<String>()
        let accepted = Locked<Bool?>(nil)
        let user = WaitingService(onShutdown: {
            accepted.withLock { $0 = thread.loop.perform { ran.append("queued by a service shutting down") } }
        })
        let group = makeGroup([RunLoopThreadService(adopting: thread), user])
        await group.triggerGracefulShutdown()
        try await group.run()
        #expect(thread.isStopped)
        #expect(accepted.withLock { $0 } == true)
        #expect(ran.values == ["queued by a service shutting down"])
    }
}
