#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// A mutual-exclusion lock in one 32-bit word, whose uncontended `lock` and `unlock` are one
/// inlined atomic instruction each: the lock behind ``TracedMutex`` and a ``MessagePort``'s state,
/// so every hot path (a send, a perform, a post) pays two atomics per lock instead of two calls
/// into `pthread_mutex_lock`/`unlock` (through the PLT, a type dispatch and the same two atomics:
/// more than a send at the floor's cost can carry; see Docs/Benchmarks.md,
/// `Throughput1P.Ours.MessagePort.send` against `Throughput1P.RawLibEvent`).
///
/// The word is Drepper's ("Futexes Are Tricky", mutex 2): 0 free, 1 locked, 2 locked and a
/// waiter may be parked. A locker that loses spins briefly, then parks in the ``ParkingLot``
/// (Swift cannot make the `futex` system call itself: `syscall` is variadic; and the standard
/// library's futex-based `Mutex` is invisible to ThreadSanitizer on Linux, see ``TracedMutex``).
///
/// Memory ordering: `lock` acquires (compare-exchange, or exchange when parking) and `unlock`
/// releases (exchange), so each critical section happens-after the previous one; ThreadSanitizer
/// sees these atomics because they are compiled in this module. A parker sets the word to 2 while
/// it holds its parking-lot slot and only then sleeps (which releases the slot atomically); an
/// unlocker that swapped a 2 out takes the same slot before waking, so it cannot wake in the gap
/// between the parker's check and its sleep: no wake-up is lost. A woken parker takes the lock
/// with the word at 2 (others may still be parked), so its own unlock wakes the next.
///
/// Thread-safety: fully thread-safe; that is its purpose. Not recursive.
struct LockWord: ~Copyable {
    private let word = Atomic<UInt32>(0)

    init() {}

    /// Takes the lock, waiting if another thread holds it. `key` identifies the lock in the
    /// parking lot: the address of the object that holds this word.
    @inline(__always)
    func lock(key: UnsafeRawPointer) {
        if word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged { return }
        lockContended(key: key)
    }

    /// Takes the lock if it is free, without waiting; returns whether it did.
    @inline(__always)
    func tryLock() -> Bool {
        word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged
    }

    /// Releases the lock; the calling thread must hold it. `key` as for ``lock(key:)``.
    @inline(__always)
    func unlock(key: UnsafeRawPointer) {
        if word.exchange(0, ordering: .releasing) == 2 { ParkingLot.wakeAll(key: key) }
    }

    /// Runs `body` with the lock held: for an object that keeps a bare word beside the fields it
    /// guards (its address as `key`), where a ``TracedMutex`` would cost an allocation.
    @inline(__always)
    func withLock<R>(key: UnsafeRawPointer, _ body: () throws -> R) rethrows -> R {
        lock(key: key)
        defer { unlock(key: key) }
        return try body()
    }

    @inline(never)
    private func lockContended(key: UnsafeRawPointer) {
        // Critical sections here are a few instructions: the holder is usually gone within a
        // short spin, far sooner than a park and wake-up (two system calls, microseconds) would
        // take. A holder that was descheduled, or a holder that is itself queuing work on another
        // lock, takes longer: then give the CPU away a few times before parking.
        for attempt in 0..<132 {
            if word.load(ordering: .relaxed) == 0,
               word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged { return }
            if attempt >= 100 { sched_yield() }
        }
        ParkingLot.park(key: key) { word.exchange(2, ordering: .acquiring) == 0 }
    }
}
