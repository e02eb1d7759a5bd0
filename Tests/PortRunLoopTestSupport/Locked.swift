import Foundation

/// A lock-protected value with `Mutex`'s `withLock` API, on `NSLock` so ThreadSanitizer sees it
/// (`Synchronization.Mutex` is a futex inside the uninstrumented stdlib on Linux: false reports).
///
/// Thread-safety: `Sendable`; `value` is guarded by `lock`.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value // guarded by `lock`

    /// A lock around `value`.
    public init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, the lock held.
    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock(); defer { lock.unlock() }
        return try body(&value)
    }
}
