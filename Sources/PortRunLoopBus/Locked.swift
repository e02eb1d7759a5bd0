import Foundation

/// A value behind an `NSLock` (which ThreadSanitizer sees, unlike `Synchronization.Mutex`'s futex
/// inside the uninstrumented stdlib).
///
/// Package access: the center and the transports of this package share it.
///
/// Thread-safety: `@unchecked Sendable`: `value` is read and written only under `lock`.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    /// Guarded by `lock`. `@exclusivity(unchecked)`: the lock already makes every access
    /// exclusive, and a nested `withLock` on one thread blocks in `lock()` before it could reach
    /// the value, so the runtime's dynamic check (`swift_beginAccess`, ~100 instructions) can
    /// never fire, and would run on every call, several times per notification delivered.
    @exclusivity(unchecked) private var value: Value

    /// A lock around `value`.
    ///
    /// Thread-safety: any thread.
    package init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    ///
    /// Thread-safety: any thread (not re-entrant).
    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
