import Foundation
import PortRunLoopKit
import ServiceLifecycle

/// A `RunLoopThread` as a swift-service-lifecycle `Service`: the thread runs for as long as the
/// service does, and is stopped and joined when the `ServiceGroup` shuts down.
///
/// ```swift
/// let io = try RunLoopThread(name: "io")            // or RunLoopThreadService(name: "io")
/// let connection = Connection(loop: io.loop)        // e.g. an actor pinned to the loop
/// let group = ServiceGroup(services: [RunLoopThreadService(adopting: io), server],
///                          gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
///
/// The service owns the thread's lifetime: it starts it (``init(name:drain:)``,
/// ``init(drain:starting:)``) or adopts one made by the caller (``init(adopting:drain:)``), and stops
/// it. `run()`:
/// - returns once graceful shutdown was triggered or the task was cancelled, after it stopped the
///   thread with `RunLoopThread.stop()` and the thread was joined. The stop rule applies: everything
///   queued on the loop before the stop (perform blocks in the running mode, `submit` and
///   `performAndWait` bodies, messages already sent to its ports) is handled, then the loop shuts
///   down. On graceful shutdown the ``drain`` may first keep the loop running until it is idle;
///   cancellation skips the drain.
/// - rethrows the error of the thread's start (a `PortRunLoopError` such as `threadCreationFailed`
///   or `eventBaseCreationFailed`, or whatever the `starting` closure throws).
/// - throws ``RunLoopThreadServiceError/threadEndedUnexpectedly(threadName:)`` when the thread ends
///   before it was asked to stop (something else called its `stop()`), once it has been joined; a
///   thread that is meant to outlive nothing has failed when it ends on its own. To make that end
///   the whole group gracefully instead of cancelling it, give the service's
///   `ServiceGroupConfiguration.ServiceConfiguration` `failureTerminationBehavior: .gracefullyShutdownGroup`.
/// - throws ``RunLoopThreadServiceError/alreadyRun`` when called a second time.
///
/// A group shuts its services down in reverse order, so list this service before the services
/// that queue work on its thread: they have finished by the time the thread is stopped.
///
/// Stopping joins the thread on a thread of its own, not on the cooperative pool: `run()` waits
/// for as long as the work queued before the stop takes, without blocking a pool thread.
///
/// Thread-safety: `Sendable`; every member is safe from any thread or task. `run()` runs once.
public final class RunLoopThreadService: Service, Sendable, CustomStringConvertible {
    private enum Origin {
        case adopted(RunLoopThread)
        case started(name: String?, make: @Sendable () throws -> RunLoopThread)
    }

    private enum Phase {
        case ready
        case starting
        case running(RunLoopThread)
        case finished(RunLoopThread?)
    }

    /// What the thread is let to finish, once the service is asked to stop, before it is stopped.
    ///
    /// Thread-safety: immutable.
    public let drain: Drain
    private let origin: Origin
    private let phase = TracedMutex(Phase.ready)

    /// A service that starts a `RunLoopThread` named `name` when it runs (so a failed start is
    /// thrown by `run()`, and a group that never runs starts no thread).
    ///
    /// Thread-safety: any thread.
    public convenience init(name: String, drain: Drain = .queuedWork) {
        self.init(origin: .started(name: name, make: { try RunLoopThread(name: name) }), drain: drain)
    }

    /// A service that calls `makeThread` to start its thread when it runs, and throws what it
    /// throws from `run()`. For setup the thread must have before the service counts as running
    /// (ports, timers, fd sources added to its loop): do it in `makeThread`, which runs on the task
    /// that runs the service. The thread it returns must be one no other service owns.
    ///
    /// Thread-safety: any thread; `makeThread` is called once, from `run()`.
    public convenience init(drain: Drain = .queuedWork, starting makeThread: @escaping @Sendable () throws -> RunLoopThread) {
        self.init(origin: .started(name: nil, make: makeThread), drain: drain)
    }

    /// A service that runs `thread`, made by the caller (who can use its loop before the group
    /// runs, e.g. to pin actors to it), and stops it on shutdown. From now on the service owns the
    /// thread's lifetime: stopping it elsewhere makes `run()` throw
    /// ``RunLoopThreadServiceError/threadEndedUnexpectedly(threadName:)``, and so does a thread that
    /// is already stopped when the service runs.
    ///
    /// Thread-safety: any thread.
    public convenience init(adopting thread: RunLoopThread, drain: Drain = .queuedWork) {
        self.init(origin: .adopted(thread), drain: drain)
    }

    private init(origin: Origin, drain: Drain) {
        self.origin = origin
        self.drain = drain
    }

    /// The thread the service runs: an adopted thread at once, a started one once `run()` has
    /// started it (nil before, and when its start failed). It stays readable after `run()` returned.
    ///
    /// Thread-safety: any thread.
    public var thread: RunLoopThread? {
        if case .adopted(let thread) = origin { return thread }
        return phase.withLock { phase in
            switch phase {
            case .ready, .starting: nil
            case .running(let thread): thread
            case .finished(let thread): thread
            }
        }
    }

    /// `RunLoopThreadService(<thread name>)`, the name `ServiceGroup` logs the service under.
    ///
    /// Thread-safety: any thread.
    public var description: String {
        switch origin {
        case .adopted(let thread): "RunLoopThreadService(\(thread.name))"
        case .started(let name?, _): "RunLoopThreadService(\(name))"
        case .started(nil, _): "RunLoopThreadService(\(thread?.name ?? "not started"))"
        }
    }

    /// Starts (or takes over) the thread, waits for graceful shutdown or cancellation, lets the
    /// ``drain`` run on graceful shutdown, then stops the thread and returns once it was joined.
    /// See the type's documentation for what it throws.
    ///
    /// Thread-safety: any task; once per service.
    public func run() async throws {
        let thread = try start()
        let reason = PendingResult<StopCause>(serving: .synchronousWait)
        ThreadEndWatch.watch(thread) { reason.finish(.threadEnded) }
        let cause = await withTaskCancellationOrGracefulShutdownHandler {
            // No cause: the task was cancelled, which is a stop asked for.
            await reason.value() ?? .stopRequested
        } onCancelOrGracefulShutdown: {
            reason.finish(.stopRequested)
        }
        // A thread that ends while the stop is being asked for is not an error.
        let wasAsked = cause == .stopRequested || Task.isCancelled || Task.isShuttingDownGracefully
        if wasAsked, !Task.isCancelled {
            await drain.perform(on: thread.loop)
        }
        await thread.stopAwaitingTheJoin()
        phase.withLock { $0 = .finished(thread) }
        if !wasAsked {
            throw RunLoopThreadServiceError.threadEndedUnexpectedly(threadName: thread.name)
        }
    }

    /// Claims the service's single run and returns its thread, started if need be.
    private func start() throws -> RunLoopThread {
        let claimed = phase.withLock { phase -> Bool in
            guard case .ready = phase else { return false }
            phase = .starting
            return true
        }
        guard claimed else { throw RunLoopThreadServiceError.alreadyRun }
        switch origin {
        case .adopted(let thread):
            phase.withLock { $0 = .running(thread) }
            return thread
        case .started(_, let make):
            do {
                let thread = try make()
                phase.withLock { $0 = .running(thread) }
                return thread
            } catch {
                phase.withLock { $0 = .finished(nil) }
                throw error
            }
        }
    }
}
