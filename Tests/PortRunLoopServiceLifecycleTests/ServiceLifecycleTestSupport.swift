import Foundation
import Logging
import PortRunLoopKit
import ServiceLifecycle
import PortRunLoopTestSupport

/// Parks `thread`'s loop in a nested run of a private mode that nothing but a stop ends (a port
/// keeps the mode non-empty), and returns once it is there. Work queued meanwhile in the common
/// modes stays queued until the thread is stopped, so a test knows it is still queued when the stop
/// arrives; the stop rule then has it handled before the loop shuts down.
func parkUntilStopped(_ thread: RunLoopThread) {
    let parked = Signal()
    let mode = RunLoop.Mode("PortRunLoopServiceLifecycleTests.parked")
    thread.loop.add(MessagePort(), forMode: mode)
    thread.loop.perform {
        parked.fire()
        PortRunLoop.current.run(mode: mode, before: .distantFuture) // ended by the thread's stop()
    }
    _ = parked.wait()
}

/// A logger that drops everything (the groups' debug logs would only clutter the test output).
let quietLogger = Logger(label: "PortRunLoopServiceLifecycleTests", factory: { _ in SwiftLogNoOpLogHandler() })

/// A group of `services` that logs nothing and traps no signal.
func makeGroup(_ services: [any Service]) -> ServiceGroup {
    ServiceGroup(services: services, logger: quietLogger)
}

/// A service that waits for graceful shutdown (or cancellation), then runs `onShutdown`.
struct WaitingService: Service {
    var onShutdown: @Sendable () -> Void = {}
    func run() async throws {
        try? await gracefulShutdown()
        onShutdown()
    }
}

/// Hands the thread a `starting` closure made to the test, as soon as the service has started it.
final class StartedThreads: Sendable {
    let stream: AsyncStream<RunLoopThread>
    private let continuation: AsyncStream<RunLoopThread>.Continuation

    init() { (stream, continuation) = AsyncStream.makeStream() }

    /// Starts a thread named `name` and reports it.
    func start(name: String) throws -> RunLoopThread {
        let thread = try RunLoopThread(name: name)
        continuation.yield(thread)
        return thread
    }

    /// The next thread started.
    func next() async -> RunLoopThread? {
        var iterator = stream.makeAsyncIterator()
        return await iterator.next()
    }
}
