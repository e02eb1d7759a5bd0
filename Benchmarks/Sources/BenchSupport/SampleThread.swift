/// A plain thread that runs the closures handed to it, one at a time, while the caller waits: the
/// "loop thread" of the single-threaded scenarios (fd ping-pong, timer churn). A peer's loop, its
/// sources and every one of its samples then live on one thread of their own, and every peer pays
/// the same hand-off (two ``Completion`` signals) per sample, which cancels out in the ratios.
///
/// Thread-safety: `Sendable`; ``run(_:)``, ``runThrowing(_:)`` and ``stop()`` from one driving
/// thread at a time (never from the sample thread itself).
public final class SampleThread: @unchecked Sendable {
    private let go = Completion()
    private let done = Completion()
    // Written by the driver before `go` is signalled, read by the thread after; the Completion's
    // mutex orders both.
    private var job: (() -> Void)?
    private var quit = false
    private var thread: BenchThread!

    /// Starts the thread, parked until the first ``run(_:)``.
    ///
    /// Thread-safety: any thread.
    public init() {
        thread = BenchThread { [self] in
            while true {
                go.wait()
                if quit { return }
                job!()
                job = nil
                done.signal()
            }
        }
    }

    /// Runs `body` on the thread and returns its value once it returned.
    ///
    /// Thread-safety: the driving thread.
    public func run<T>(_ body: () -> T) -> T {
        var result: T?
        withoutActuallyEscaping(body) { escapable in
            job = { result = escapable() }
            go.signal()
            done.wait()
        }
        return result!
    }

    /// ``run(_:)`` for a body that throws: its error is rethrown on the driving thread.
    ///
    /// Thread-safety: the driving thread.
    public func runThrowing<T>(_ body: () throws -> T) throws -> T {
        try run { Result { try body() } }.get()
    }

    /// Ends the thread (after the closure in progress, if any) and joins it. A ``PortRunLoop`` the
    /// thread made for itself is shut down as it exits.
    ///
    /// Thread-safety: the driving thread, once.
    public func stop() {
        quit = true
        go.signal()
        thread.join()
    }
}
