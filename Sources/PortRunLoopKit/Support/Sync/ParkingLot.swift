#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where every blocked thread of the library sleeps: 64 slots (a `pthread_mutex_t` and a
/// `pthread_cond_t` each), shared by every lock and every wait in the process and picked by the
/// address of what is waited on (as in WebKit's and Rust's parking lots). Two things park here: a
/// ``LockWord`` that lost, and the one blocking wait (``BlockingCall``) of a thread that serves no
/// loop, keyed by its completion. A lock or a wait therefore costs no system object; threads
/// parked for different keys that share a slot are all woken (broadcast), re-check their own
/// predicate and sleep again.
///
/// The rule that makes a wait exact: the waiter's predicate is evaluated with the slot locked,
/// and a waker changes the state first and then calls ``wakeAll(key:)``, which takes the same slot
/// lock; so a change cannot fall between the waiter's last check and its sleep. A predicate runs
/// with a slot locked, so it reads atomics only and never takes a ``LockWord`` (which might park on
/// the same slot).
///
/// Thread-safety: fully thread-safe; that is its purpose. The slots are made once and never freed.
enum ParkingLot {
    private static let slots: [Slot] = (0..<64).map { _ in Slot() }

    private static func slot(for key: UnsafeRawPointer) -> Slot {
        // Objects are at least 16-byte aligned: drop the low bits before picking a slot.
        slots[Int((UInt(bitPattern: key) >> 4) % UInt(slots.count))]
    }

    /// Sleeps until `acquired()` returns true. `acquired` is evaluated with the slot locked, first
    /// at once and then after every wake-up (which may be spurious or meant for another key).
    static func park(key: UnsafeRawPointer, until acquired: () -> Bool) {
        _ = park(key: key, deadline: .infinity, until: acquired)
    }

    /// Sleeps until `ready()` returns true or the monotonic `deadline` (seconds, `.infinity` for
    /// none) passes; returns the last answer of `ready()`. Like ``park(key:until:)``, `ready` is
    /// evaluated with the slot locked, so a waker that changes the state and then calls
    /// ``wakeAll(key:)`` cannot be missed.
    static func park(key: UnsafeRawPointer, deadline: Double, until ready: () -> Bool) -> Bool {
        let slot = slot(for: key)
        slot.lock()
        defer { slot.unlock() }
        while !ready() {
            if !slot.wait(untilMonotonic: deadline), System.monotonicSeconds() >= deadline { return ready() }
        }
        return true
    }

    /// Wakes every thread parked on `key`'s slot.
    static func wakeAll(key: UnsafeRawPointer) {
        let slot = slot(for: key)
        slot.lock()
        slot.broadcast()
        slot.unlock()
    }

    /// One slot: the operating system's sleep, used only here (the one place the library calls
    /// `pthread_mutex_*` and `pthread_cond_*`, which ThreadSanitizer intercepts).
    ///
    /// Thread-safety: fully thread-safe; that is its purpose.
    private final class Slot: @unchecked Sendable {
        private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

        init() {
            // Adaptive: a locker that finds the slot taken spins briefly before sleeping in the
            // kernel; a slot is held for a few instructions (a check, a broadcast).
            var mutexAttr = pthread_mutexattr_t()
            pthread_mutexattr_init(&mutexAttr)
            var rc = pthread_mutexattr_settype(&mutexAttr, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
            InternalFailure.check(rc == 0, "pthread_mutexattr_settype(PTHREAD_MUTEX_ADAPTIVE_NP) failed, errno \(rc)")
            rc = pthread_mutex_init(mutex, &mutexAttr)
            pthread_mutexattr_destroy(&mutexAttr)
            InternalFailure.check(rc == 0, "pthread_mutex_init failed, errno \(rc)")
            var condAttr = pthread_condattr_t()
            pthread_condattr_init(&condAttr)
            pthread_condattr_setclock(&condAttr, CLOCK_MONOTONIC)
            rc = pthread_cond_init(cond, &condAttr)
            pthread_condattr_destroy(&condAttr)
            InternalFailure.check(rc == 0, "pthread_cond_init failed, errno \(rc)")
        }

        deinit {
            pthread_cond_destroy(cond)
            pthread_mutex_destroy(mutex)
            cond.deallocate()
            mutex.deallocate()
        }

        func lock() { pthread_mutex_lock(mutex) }
        func unlock() { pthread_mutex_unlock(mutex) }
        func broadcast() { pthread_cond_broadcast(cond) }

        /// Waits (slot locked) until woken or until the monotonic `deadline`. False on timeout;
        /// spurious wake-ups return true (callers loop on their predicate).
        func wait(untilMonotonic deadline: Double) -> Bool {
            if deadline == .infinity {
                pthread_cond_wait(cond, mutex)
                return true
            }
            var ts = timespec(monotonicDeadline: deadline)
            return pthread_cond_timedwait(cond, mutex, &ts) != ETIMEDOUT
        }
    }
}
