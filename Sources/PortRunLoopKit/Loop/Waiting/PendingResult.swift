import Foundation

/// A one-shot result another thread (usually a loop's) sets and the thread that made it waits for,
/// bounded in time, in the package's one blocking wait (``BlockingCall``): for modules that wait
/// for an outcome their loop produces (a bus transport's subscription confirmed, its first
/// connection made or refused, a flush written).
///
/// Made on the thread that will wait. If that thread runs a loop, the wait serves it in `serving`:
/// the owner of a transport passes its private wait mode when the waiting thread is the
/// transport's own loop (so only the transport's sources run there), and `.synchronousWait`
/// otherwise (so the thread still serves other threads' synchronous calls, W4).
///
/// Thread-safety: `@unchecked Sendable`; `value` is guarded by `lock` (keyed by this object);
/// ``finish(_:)`` from any thread, ``wait(until:)`` from the thread that made it, or ``value()``
/// from one task.
package final class PendingResult<Value: Sendable>: BlockingCall, @unchecked Sendable {
    private let lock = LockWord()
    @exclusivity(unchecked) private var value: Value?

    /// A result the calling thread will wait for, serving its loop (if it has one) in `serving`.
    package init(serving: RunLoop.Mode) {
        super.init(waiter: PortRunLoop.existingForCurrentThread(), serving: serving)
    }

    private func withValueLocked<R>(_ body: () -> R) -> R {
        lock.withLock(key: UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()), body)
    }

    /// Sets the result (the first one set stays) and wakes the waiter.
    package func finish(_ result: Value) {
        let first = withValueLocked { () -> Bool in
            guard value == nil else { return false }
            value = result
            return true
        }
        if first { complete() }
    }

    /// The result, if it was set.
    package var result: Value? { withValueLocked { value } }

    /// Waits until the result is set or the monotonic `deadline` (seconds) passes; nil when it did
    /// not come in time.
    package func wait(until deadline: Double) -> Value? {
        waitUntilComplete(deadline: deadline)
        return result
    }

    /// Waits at most `timeout` for the result; nil when it did not come in time.
    package func wait(timeout: Duration) -> Value? {
        wait(until: System.monotonicSeconds() + timeout.seconds)
    }

    /// Suspends the calling task until the result is set; nil when the task was cancelled first.
    package func value() async -> Value? {
        await waitAsync()
        return result
    }

    /// Nothing was started that must be waited for: the deadline (or a cancellation of the waiting
    /// task) ends the wait with no result.
    override package func deadlinePassed() { complete() }
}
