#if canImport(Glibc)
import Glibc
#endif

/// A plain joinable pthread for consumers and producers (no Foundation `Thread`, so the peers that
/// need a thread of their own all get the same kind).
///
/// Thread-safety: `Sendable`; ``join()`` once, from another thread.
public final class BenchThread: @unchecked Sendable {
    private var thread = pthread_t()

    private final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// Starts `body` on a new thread.
    ///
    /// Thread-safety: any thread.
    public init(_ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        let rc = pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            box.body()
            return nil
        }, context)
        precondition(rc == 0, "BenchThread: pthread_create failed, errno \(rc)")
    }

    /// Waits for the thread to end.
    ///
    /// Thread-safety: once, from another thread.
    public func join() {
        pthread_join(thread, nil)
    }
}
