import Foundation

/// A value behind an `NSLock` (which ThreadSanitizer sees, unlike `Synchronization.Mutex`'s futex
/// inside the uninstrumented stdlib).
///
/// Shared with the Redis transport (the `Transport` SPI), which has the same need.
///
/// Thread-safety: `@unchecked Sendable`: `value` is read and written only under `lock`.
@_spi(Transport) public final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value // guarded by `lock`

    /// A lock around `value`.
    ///
    /// Thread-safety: any thread.
    public init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    ///
    /// Thread-safety: any thread (not re-entrant).
    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
