#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// A mutex-protected value with `Synchronization.Mutex`'s `withLock` API, built on a ``LockWord``
/// so that ThreadSanitizer sees it.
///
/// Why not `Mutex` itself: on Linux its lock is a futex driven from inside the uninstrumented
/// standard library, so TSan sees neither lock nor unlock and reports every access the mutex
/// protects as a race (reproduced with Swift 6.3.1 and a two-thread `Mutex<[Int]>` append loop).
/// Annotating with `__tsan_acquire`/`__tsan_release` inside the closure is not enough either: the
/// Swift exclusivity access to the value begins before the annotation runs. A ``LockWord``'s
/// acquire and release are atomics compiled in this module, which TSan instruments, and its
/// parking lot is `pthread_mutex_t`/`pthread_cond_t`, which TSan intercepts; uncontended, it costs
/// one inlined atomic per lock and per unlock (less than `pthread_mutex_lock`; see
/// Docs/Benchmarks.md).
///
/// It is also the library's one condition variable: ``wait(untilMonotonic:until:)`` blocks until a
/// predicate on the value holds (or a deadline passes) and ``broadcast()`` wakes the waiters after a
/// change. Waiters sleep in the ``ParkingLot`` (no allocation, no system object per mutex).
///
/// Thread-safety: fully thread-safe; that is its purpose.
package struct TracedMutex<Value: ~Copyable>: ~Copyable, @unchecked Sendable {
    private let box: Box

    private final class Box {
        let word = LockWord()
        // Guarded by `word`; reached through the pointer, so that `withLock` pays no dynamic
        // exclusivity check (a class's stored `var` costs two runtime calls per access) and
        // ThreadSanitizer sees plain memory accesses ordered by the lock, not a Swift property
        // access that begins before the lock is taken. Its address is also the lock's key in
        // the parking lot.
        let storage: UnsafeMutablePointer<Value>
        /// An eventcount for ``TracedMutex/wait(untilMonotonic:until:)``: bumped by every
        /// ``TracedMutex/broadcast()``. A waiter reads it with the lock held, after its predicate
        /// failed, and sleeps only while it has not moved, so a change made (under the lock) after
        /// that check cannot be missed.
        let generation = Atomic<UInt32>(0)
        /// Threads inside `wait` (a broadcast with none skips the parking lot).
        let sleepers = Atomic<Int>(0)

        init(_ value: consuming Value) {
            storage = .allocate(capacity: 1)
            storage.initialize(to: value)
        }

        deinit {
            storage.deinitialize(count: 1)
            storage.deallocate()
        }
    }

    package init(_ initialValue: consuming sending Value) {
        box = Box(initialValue)
    }

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    package borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        let storage = box.storage
        box.word.lock(key: storage)
        defer { box.word.unlock(key: storage) }
        return try body(&storage.pointee)
    }

    /// ``withLock(_:)`` that hands `item` to `body` by move: for a hot path that puts a value it
    /// owns into the protected one (a closure can only copy what it captures).
    @inline(__always)
    package borrowing func withLock<Item: ~Copyable, Result: ~Copyable, E: Error>(
        handing item: consuming Item,
        _ body: (inout sending Value, consuming Item) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        let storage = box.storage
        box.word.lock(key: storage)
        defer { box.word.unlock(key: storage) }
        return try body(&storage.pointee, item)
    }

    /// Blocks until `ready` holds for the value (evaluated with the lock held) or the monotonic
    /// `deadline` (seconds; `.infinity` for none) passes. Returns the last answer of `ready`. Call it
    /// without the lock held; whoever changes what `ready` reads calls ``broadcast()`` afterwards.
    package borrowing func wait(untilMonotonic deadline: Double = .infinity, until ready: (inout Value) -> Bool) -> Bool {
        let box = self.box
        let key = UnsafeRawPointer(box.storage)
        box.sleepers.add(1, ordering: .sequentiallyConsistent)
        defer { box.sleepers.subtract(1, ordering: .sequentiallyConsistent) }
        while true {
            box.word.lock(key: key)
            let holds = ready(&box.storage.pointee)
            let seen = box.generation.load(ordering: .sequentiallyConsistent)
            box.word.unlock(key: key)
            if holds { return true }
            let moved = ParkingLot.park(key: key, deadline: deadline) {
                box.generation.load(ordering: .sequentiallyConsistent) != seen
            }
            if !moved {
                // The deadline passed: one last look, under the lock.
                box.word.lock(key: key)
                defer { box.word.unlock(key: key) }
                return ready(&box.storage.pointee)
            }
        }
    }

    /// Takes the lock, for code that must let it go in the middle of a critical section (around a
    /// blocking system call) and so cannot be one `withLock` closure. Pair with ``unlock()``.
    @inline(__always)
    package borrowing func lock() { box.word.lock(key: box.storage) }

    /// Releases the lock taken by ``lock()``.
    @inline(__always)
    package borrowing func unlock() { box.word.unlock(key: box.storage) }

    /// A classic condition wait, for code that holds the lock through ``lock()``: releases it,
    /// sleeps until the next ``broadcast()`` or the monotonic `deadline`, and takes it again.
    /// Returns false on timeout. Callers loop on their own predicate (a broadcast meant for another
    /// waiter also wakes this one). The same eventcount as ``wait(untilMonotonic:until:)``: the
    /// waiter counts itself before it reads the generation, and reads it with the lock still held,
    /// so a change made after its check (under the lock) and broadcast cannot be missed.
    package borrowing func waitLocked(untilMonotonic deadline: Double) -> Bool {
        let box = self.box
        let key = UnsafeRawPointer(box.storage)
        box.sleepers.add(1, ordering: .sequentiallyConsistent)
        let seen = box.generation.load(ordering: .sequentiallyConsistent)
        box.word.unlock(key: key)
        let moved = ParkingLot.park(key: key, deadline: deadline) {
            box.generation.load(ordering: .sequentiallyConsistent) != seen
        }
        box.sleepers.subtract(1, ordering: .sequentiallyConsistent)
        box.word.lock(key: key)
        return moved
    }

    /// Wakes the threads in ``wait(untilMonotonic:until:)`` to re-check their predicates. Call it
    /// after changing the value, with or without the lock held.
    package borrowing func broadcast() {
        let box = self.box
        // Sequentially consistent on both sides: a waiter counts itself and then reads the
        // generation; this bumps the generation and then reads the count (store-load on each side).
        box.generation.add(1, ordering: .sequentiallyConsistent)
        if box.sleepers.load(ordering: .sequentiallyConsistent) > 0 {
            ParkingLot.wakeAll(key: UnsafeRawPointer(box.storage))
        }
    }
}
