#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A mutex-protected value with `Synchronization.Mutex`'s `withLock` API, built on a
/// `pthread_mutex_t` so that ThreadSanitizer sees it.
///
/// Why not `Mutex` itself: on Linux its lock is a futex driven from inside the uninstrumented
/// standard library, so TSan sees neither lock nor unlock and reports every access the mutex
/// protects as a race (reproduced with Swift 6.3.1 and a two-thread `Mutex<[Int]>` append loop).
/// Annotating with `__tsan_acquire`/`__tsan_release` inside the closure is not enough either: the
/// Swift exclusivity access to the value begins before the annotation runs. TSan intercepts
/// `pthread_mutex_lock`/`unlock` natively, so this type is race-report-free by construction, and an
/// uncontended lock costs the same few nanoseconds as the futex.
///
/// Thread-safety: fully thread-safe; that is its purpose.
struct TracedMutex<Value: ~Copyable>: ~Copyable, @unchecked Sendable {
    private let box: Box

    private final class Box {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        var value: Value // guarded by `mutex`

        init(_ value: consuming Value) {
            self.value = value
            let rc = pthread_mutex_init(mutex, nil)
            precondition(rc == 0, "PortRunLoop: pthread_mutex_init failed, errno \(rc)")
        }

        deinit {
            pthread_mutex_destroy(mutex)
            mutex.deallocate()
        }
    }

    init(_ initialValue: consuming sending Value) {
        box = Box(initialValue)
    }

    /// Runs `body` with exclusive access to the value (`pthread_mutex_lock` … `unlock`).
    @inline(__always)
    borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(box.mutex)
        defer { pthread_mutex_unlock(box.mutex) }
        return try body(&box.value)
    }
}
