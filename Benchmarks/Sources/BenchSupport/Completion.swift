#if canImport(Glibc)
import Glibc
#endif

/// A one-shot, re-armable "done" signal between two threads (pthread mutex + condition variable).
///
/// Every scenario ends a sample the same way, whatever the peer: the consumer side calls
/// ``signal()`` and the driving thread returns from ``wait()``. So the cost of this hand-off is the
/// same for every peer and cancels out in the ratios.
///
/// Thread-safety: `Sendable`; any thread.
public final class Completion: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var signalled = false // guarded by `mutex`

    /// Makes an unsignalled completion.
    ///
    /// Thread-safety: any thread.
    public init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(cond, nil)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    /// Marks the completion done and wakes the waiter.
    ///
    /// Thread-safety: any thread.
    public func signal() {
        pthread_mutex_lock(mutex)
        signalled = true
        pthread_cond_signal(cond)
        pthread_mutex_unlock(mutex)
    }

    /// Blocks until ``signal()`` was called, then re-arms.
    ///
    /// Thread-safety: one waiting thread at a time.
    public func wait() {
        pthread_mutex_lock(mutex)
        while !signalled { pthread_cond_wait(cond, mutex) }
        signalled = false
        pthread_mutex_unlock(mutex)
    }
}
