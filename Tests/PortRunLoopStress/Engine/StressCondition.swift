#if canImport(Glibc)
import Glibc
#endif

/// A value guarded by a `pthread_mutex_t`, with a condition variable to wait for the value to
/// reach a state: what the fd and timer parts of the stress engine use to wait for a handler's
/// progress (a pipe drained, a timer fired) without sleeping. Every wait has a deadline, so a lost
/// wake-up in the library shows up as a reported violation, not as a hang.
///
/// Like ``Locked``, it uses pthread primitives (which ThreadSanitizer sees) rather than
/// `Synchronization.Mutex`. Waits are on the monotonic clock.
///
/// Thread-safety: fully thread-safe; that is its purpose.
final class StressCondition<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var value: Value // guarded by `mutex`
    private var waiters = 0 // guarded by `mutex`

    init(_ value: Value) {
        self.value = value
        var rc = pthread_mutex_init(mutex, nil)
        precondition(rc == 0, "StressCondition: pthread_mutex_init failed, errno \(rc)")
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        rc = pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
        precondition(rc == 0, "StressCondition: pthread_cond_init failed, errno \(rc)")
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value, then wakes every waiter (it may have
    /// changed). Not re-entrant. Without a waiter it signals nothing: handlers update their
    /// records on every call, and under valgrind a broadcast to no one is not free.
    @discardableResult
    func update<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer {
            if waiters > 0 { pthread_cond_broadcast(condition) }
            pthread_mutex_unlock(mutex)
        }
        return try body(&value)
    }

    /// A copy of the value.
    var snapshot: Value {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return value
    }

    /// Waits until `predicate` holds (checked under the lock after every ``update(_:)``) or
    /// `seconds` have passed; returns whether it holds.
    func wait(seconds: Double, until predicate: (Value) -> Bool) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let whole = seconds.rounded(.down)
        deadline.tv_sec += Int(whole)
        deadline.tv_nsec += Int((seconds - whole) * 1e9)
        if deadline.tv_nsec >= 1_000_000_000 {
            deadline.tv_sec += 1
            deadline.tv_nsec -= 1_000_000_000
        }
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        waiters += 1
        defer { waiters -= 1 }
        while !predicate(value) {
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { return predicate(value) }
        }
        return true
    }
}
