/// Where threads that lost a ``LockWord`` sleep: 64 ``ConditionLock``s (a `pthread_mutex_t` and a
/// `pthread_cond_t` each), shared by every lock in the process and picked by the lock's address
/// (as in WebKit's and Rust's parking lots). A lock therefore costs no allocation and no system
/// object; threads parked for different locks that share a slot are all woken (broadcast),
/// re-check their own lock and sleep again.
///
/// Thread-safety: fully thread-safe; that is its purpose. The slots are made once and never freed.
enum ParkingLot {
    private static let slots: [ConditionLock] = (0..<64).map { _ in ConditionLock() }

    private static func slot(for key: UnsafeRawPointer) -> ConditionLock {
        // Objects are at least 16-byte aligned: drop the low bits before picking a slot.
        slots[Int((UInt(bitPattern: key) >> 4) % UInt(slots.count))]
    }

    /// Sleeps until `acquired()` returns true. `acquired` is evaluated with the slot locked, first
    /// at once and then after every wake-up (which may be spurious or meant for another lock).
    static func park(key: UnsafeRawPointer, until acquired: () -> Bool) {
        let slot = slot(for: key)
        slot.withLock {
            while !acquired() { _ = slot.wait(untilMonotonic: .infinity) }
        }
    }

    /// Sleeps until `ready()` returns true or the monotonic `deadline` passes; returns the last
    /// answer of `ready()`. Like ``park(key:until:)``, `ready` is evaluated with the slot locked,
    /// so a waker that changes the state and then calls ``wakeAll(key:)`` cannot be missed.
    static func park(key: UnsafeRawPointer, deadline: Double, until ready: () -> Bool) -> Bool {
        let slot = slot(for: key)
        return slot.withLock {
            while !ready() {
                if !slot.wait(untilMonotonic: deadline), System.monotonicSeconds() >= deadline { return ready() }
            }
            return true
        }
    }

    /// Wakes every thread parked on `key`'s slot.
    static func wakeAll(key: UnsafeRawPointer) {
        let slot = slot(for: key)
        slot.withLock { slot.broadcast() }
    }
}
