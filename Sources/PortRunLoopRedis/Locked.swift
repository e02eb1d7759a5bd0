import Foundation

/// A value behind an `NSLock` (which ThreadSanitizer sees, unlike `Synchronization.Mutex`'s futex
/// inside the uninstrumented stdlib).
///
/// Thread-safety: `@unchecked Sendable`: `value` is read and written only under `lock`.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value // guarded by `lock`

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
