// ServiceLifecycleProbe: a program whose main thread runs PortRunLoop.main under a ServiceGroup
// (MainRunLoop.run), used by MainRunLoopTests: only a separate program has a main thread of its own
// and can be sent SIGTERM.
//
// Usage: ServiceLifecycleProbe [sigterm | stop-main-loop | start-failure]
// - sigterm (the default): prints "ready …" once the group runs, then waits for SIGTERM (the
//   group's graceful-shutdown signal).
// - stop-main-loop: prints "ready …", then stops the main loop from a main-queue block, which asks
//   the group to shut down gracefully.
// - start-failure: the group's RunLoopThreadService fails to start its thread (its `starting`
//   closure throws what RunLoopThread.init throws when pthread_create fails), so MainRunLoop.run
//   throws the group's error: prints "group-error …" and exits 2.
// After a graceful shutdown it prints what it saw, then "clean-exit" and exits 0 when every check
// passed, 1 when one failed. Exits 3 when it has not finished within 30 seconds (a safety bound
// against hangs, never used for ordering).
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Logging
import PortRunLoopKit
import PortRunLoopServiceLifecycle
import ServiceLifecycle

let mode = CommandLine.arguments.dropFirst().first ?? "sigterm"
let recorded = ProbeLines()
let finished = DispatchSemaphore(value: 0)

// Watchdog: if the group never finishes, fail instead of hanging the test.
Thread.detachNewThread {
    if finished.wait(timeout: .now() + 30) == .timedOut {
        emit("FAIL timeout: the group did not finish within 30 s; recorded: \(recorded.lines)")
        exit(3)
    }
}

precondition(Thread.isMainThread, "ServiceLifecycleProbe: top-level code must run on the main thread")

let logger = Logger(label: "ServiceLifecycleProbe")
let group: ServiceGroup
let worker: RunLoopThread?
if mode == "start-failure" {
    worker = nil
    let doomed = RunLoopThreadService(starting: { throw PortRunLoopError.threadCreationFailed(errno: EAGAIN) })
    group = ServiceGroup(services: [doomed], gracefulShutdownSignals: [.sigterm], logger: logger)
} else {
    let thread = try RunLoopThread(name: "probe-worker")
    worker = thread
    // The worker's service is listed first, so it is shut down last, after the probe's service.
    group = ServiceGroup(services: [RunLoopThreadService(adopting: thread),
                                    ProbeService(worker: thread, stopsMainLoop: mode == "stop-main-loop")],
                         gracefulShutdownSignals: [.sigterm], logger: logger)
}

do {
    try MainRunLoop.run(group)
} catch {
    finished.signal()
    emit("group-error \(error is PortRunLoopError ? "PortRunLoopError" : "\(type(of: error))"): \(error)")
    exit(2)
}
finished.signal()
recorded.append("group-finished main=\(Thread.isMainThread)")
recorded.append("worker-stopped=\(worker?.isStopped ?? false)")

let expected = [
    "shutdown main-actor-on-main=true",
    "worker ran work queued at shutdown",
    "group-finished main=true",
    "worker-stopped=true",
]
let got = recorded.lines
for line in got { emit(line) }
if got == expected {
    emit("clean-exit")
    exit(0)
} else {
    emit("FAIL expected \(expected)")
    exit(1)
}
