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
/// It is only a lock: a thread that waits for the value to change waits in the package's one
/// blocking wait (a ``StateChangeWait`` the changer completes; see ``BlockingCall``).
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

    /// Takes the lock, for code that must let it go in the middle of a critical section (around a
    /// blocking system call) and so cannot be one `withLock` closure. Pair with ``unlock()``.
    @inline(__always)
    package borrowing func lock() { box.word.lock(key: box.storage) }

    /// Releases the lock taken by ``lock()``.
    @inline(__always)
    package borrowing func unlock() { box.word.unlock(key: box.storage) }
}
