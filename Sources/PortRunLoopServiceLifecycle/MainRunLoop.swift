import Foundation
import PortRunLoopKit
import ServiceLifecycle

/// Runs a `ServiceGroup` with `PortRunLoop.main` as the process's main loop: the group runs in a
/// task while the main thread runs the main loop — which serves `DispatchQueue.main`, `@MainActor`
/// and whatever the program scheduled on `PortRunLoop.main` — until the group has finished.
///
/// ```swift
/// // main.swift: synchronous top-level code (no `await`), so the main thread is the program's own.
/// let group = ServiceGroup(services: [RunLoopThreadService(name: "io"), server],
///                          gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
/// try MainRunLoop.run(group)
/// ```
///
/// Thread-safety: a caseless namespace, `Sendable`; ``run(_:)`` is main-thread only.
public enum MainRunLoop: Sendable {
    /// Runs `group` in a task and `PortRunLoop.main` on the calling thread, the main thread, until
    /// the group has finished; then returns, or rethrows the group's error.
    ///
    /// - The main loop keeps running through the group's graceful shutdown, so services that shut
    ///   down still reach the main actor and the main queue; it stops once `group.run()` returned
    ///   (after a graceful shutdown from one of the group's signals or `triggerGracefulShutdown()`,
    ///   after its cancellation, or when a service failed).
    /// - Stopping the main loop from code it runs (`PortRunLoop.main.stop()` in a main-queue block,
    ///   a `@MainActor` task or a handler of the main loop) asks the group to shut down gracefully,
    ///   and the loop keeps running until it has. (A `stop()` that ends a nested run of the main
    ///   loop only ends that run.)
    /// - The main queue is served only when the main thread is the program's own: call this from
    ///   synchronous top-level code, not from an `async` `main`, which hands the main thread to
    ///   `dispatchMain()` (hence `noasync`).
    /// - A group that already ran throws its `ServiceGroupError` at once, as `run()` does.
    ///
    /// Thread-safety: the main thread only (precondition).
    @available(*, noasync, message: "the main thread must run PortRunLoop.main: call it from synchronous top-level code")
    public static func run(_ group: ServiceGroup) throws {
        let loop = PortRunLoop.main
        loop.preconditionOnLoopThread("MainRunLoop.run(_:)")
        // Keeps the default mode non-empty whatever else the loop has, so every run waits.
        let keepAlive = MessagePort()
        loop.add(keepAlive, forMode: .default)
        defer { keepAlive.invalidate() }
        let outcome = GroupOutcome()
        Task.detached {
            do {
                try await group.run()
                outcome.record(.success(()))
            } catch {
                outcome.record(.failure(error))
            }
            // A block is handled work: it ends the wait of the run below (or of the nested run it
            // lands in, whose outer run then returns after its turn) even when queued before the
            // loop runs.
            loop.perform {}
        }
        var askedToShutDown = false
        while true {
            if let result = outcome.result { return try result.get() }
            // Returns after each turn that handled something, so the outcome is checked as soon as
            // the group has finished, whichever run the wake-up block was handled in.
            let ended = loop.run(mode: .default, timeout: .infinity, returnAfterSourceHandled: true)
            if ended == .stopped, !askedToShutDown, outcome.result == nil {
                askedToShutDown = true
                Task.detached { await group.triggerGracefulShutdown() }
            }
        }
    }
}

/// How `ServiceGroup.run()` ended, once it has: set on the group's task, read on the main thread.
///
/// Thread-safety: `Sendable`: `stored` is a ``TracedMutex``; any thread.
final class GroupOutcome: Sendable {
    private let stored = TracedMutex<Result<Void, any Error>?>(nil)

    func record(_ result: Result<Void, any Error>) {
        stored.withLock { $0 = result }
    }

    var result: Result<Void, any Error>? {
        stored.withLock { $0 }
    }
}
