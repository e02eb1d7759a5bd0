#if canImport(Glibc)
import Glibc
#endif

/// A value guarded by a `pthread_mutex_t`, with `Mutex`'s `withLock` shape.
///
/// Why not `Synchronization.Mutex`: on Linux its lock lives inside the uninstrumented standard
/// library, so ThreadSanitizer sees neither lock nor unlock and would report every access it
/// protects as a race. The stress engine and the reliability tests must be clean under TSan, so
/// they use this instead.
///
/// Thread-safety: fully thread-safe; that is its purpose.
final class Locked<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var value: Value // guarded by `mutex`

    /// Thread-safety: any thread.
    init(_ value: Value) {
        self.value = value
        let rc = pthread_mutex_init(mutex, nil)
        precondition(rc == 0, "Locked: pthread_mutex_init failed, errno \(rc)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    ///
    /// Thread-safety: any thread; not re-entrant.
    @discardableResult
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// A copy of the value.
    ///
    /// Thread-safety: any thread.
    var snapshot: Value { withLock { $0 } }
}
