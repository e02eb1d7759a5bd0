#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// `MainRunLoop.run(_:)`: a program's main thread runs `PortRunLoop.main` while a `ServiceGroup`
/// runs, and returns (or throws the group's error) once the group has finished.
///
/// swift-testing runs tests off the main thread and hands the main thread to `dispatchMain()`, so
/// this can only be observed in another program: `ServiceLifecycleProbe`, whose group is a
/// `RunLoopThreadService` and a service that checks the main actor is served on the main thread,
/// before and during the group's graceful shutdown, and queues work on the service's thread while
/// shutting down. It prints "ready …" once the group runs and "clean-exit" after a clean shutdown.
@Suite(.timeLimit(.minutes(1))) struct MainRunLoopTests {
    @Test func sigtermShutsTheGroupDownGracefullyAndTheProgramExitsCleanly() throws {
        let probe = try ProbeProcess([])
        let ready = probe.waitForLine(startingWith: "ready ")
        #expect(ready, "no ready line; printed:\n\(probe.printed)")
        probe.send(SIGTERM) // the group's graceful-shutdown signal
        let status = probe.waitForExit()
        #expect(status == 0, "exit status \(String(describing: status)); printed:\n\(probe.printed)")
        let lines = probe.printed.split(separator: "\n").map(String.init)
        #expect(lines.first == "ready main-actor-on-main=true worker=probe-worker")
        #expect(lines.contains("shutdown main-actor-on-main=true"))
        #expect(lines.contains("worker ran work queued at shutdown"))
        #expect(lines.contains("worker-stopped=true"))
        #expect(lines.last == "clean-exit")
    }

    @Test func stoppingTheMainLoopShutsTheGroupDownGracefully() throws {
        let probe = try ProbeProcess(["stop-main-loop"])
        let status = probe.waitForExit()
        #expect(status == 0, "exit status \(String(describing: status)); printed:\n\(probe.printed)")
        let lines = probe.printed.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("ready main-actor-on-main=true") == true)
        #expect(lines.contains("shutdown main-actor-on-main=true"))
        #expect(lines.last == "clean-exit")
    }

    @Test func theGroupsErrorIsThrownOnTheMainThread() throws {
        let probe = try ProbeProcess(["start-failure"])
        let status = probe.waitForExit()
        #expect(status == 2, "exit status \(String(describing: status)); printed:\n\(probe.printed)")
        #expect(probe.printed == "group-error PortRunLoopError: pthread_create failed with errno \(EAGAIN)\n")
    }
}
