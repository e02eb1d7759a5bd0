#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where threads that lost a ``LockWord`` sleep: 64 slots of a `pthread_mutex_t` and a
/// `pthread_cond_t`, shared by every lock in the process and picked by the lock's address (as in
/// WebKit's and Rust's parking lots). A lock therefore costs no allocation and no system object;
/// threads parked for different locks that share a slot are all woken (broadcast), re-check their
/// own lock and sleep again.
///
/// Thread-safety: fully thread-safe; that is its purpose. The slot arrays are made once and never
/// freed or moved.
enum ParkingLot {
    private static let slotCount = 64

    private nonisolated(unsafe) static let mutexes: UnsafeMutablePointer<pthread_mutex_t> = {
        let mutexes = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: slotCount)
        for index in 0..<slotCount {
            let rc = pthread_mutex_init(mutexes + index, nil)
            precondition(rc == 0, "PortRunLoop: pthread_mutex_init failed, errno \(rc)")
        }
        return mutexes
    }()

    private nonisolated(unsafe) static let conditions: UnsafeMutablePointer<pthread_cond_t> = {
        let conditions = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: slotCount)
        for index in 0..<slotCount {
            let rc = pthread_cond_init(conditions + index, nil)
            precondition(rc == 0, "PortRunLoop: pthread_cond_init failed, errno \(rc)")
        }
        return conditions
    }()

    private static func slot(for key: UnsafeRawPointer) -> Int {
        // Objects are at least 16-byte aligned: drop the low bits before picking a slot.
        Int((UInt(bitPattern: key) >> 4) % UInt(slotCount))
    }

    /// Sleeps until `acquired()` returns true. `acquired` is evaluated with the slot's mutex held,
    /// first at once and then after every wake-up (which may be spurious or meant for another lock).
    static func park(key: UnsafeRawPointer, until acquired: () -> Bool) {
        let slot = slot(for: key)
        pthread_mutex_lock(mutexes + slot)
        while !acquired() {
            pthread_cond_wait(conditions + slot, mutexes + slot)
        }
        pthread_mutex_unlock(mutexes + slot)
    }

    /// Wakes every thread parked on `key`'s slot.
    static func wakeAll(key: UnsafeRawPointer) {
        let slot = slot(for: key)
        pthread_mutex_lock(mutexes + slot)
        pthread_cond_broadcast(conditions + slot)
        pthread_mutex_unlock(mutexes + slot)
    }
}
