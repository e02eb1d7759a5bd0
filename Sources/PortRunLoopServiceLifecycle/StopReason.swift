import Foundation

/// Why a running ``RunLoopThreadService`` goes on to stop its thread: the first of "the thread
/// ended" and "graceful shutdown or cancellation asked for it" to happen. A one-shot: the first
/// ``fire(_:)`` wins and later ones are ignored.
///
/// Thread-safety: `@unchecked Sendable`: `cause` and `waiter` are guarded by `lock`. ``fire(_:)``
/// from any thread, ``wait()`` from one task at a time.
final class StopReason: @unchecked Sendable {
    enum Cause: Sendable, Equatable {
        case threadEnded
        case stopRequested
    }

    private let lock = NSLock()
    private var cause: Cause? // guarded by `lock`
    private var waiter: CheckedContinuation<Cause, Never>? // guarded by `lock`

    /// Records `cause` unless a cause was already recorded, and wakes the waiter.
    func fire(_ cause: Cause) {
        lock.lock()
        guard self.cause == nil else { lock.unlock(); return }
        self.cause = cause
        let waiter = self.waiter
        self.waiter = nil
        lock.unlock()
        waiter?.resume(returning: cause)
    }

    /// The first cause fired, waiting for it if none was yet.
    func wait() async -> Cause {
        await withCheckedContinuation { (continuation: CheckedContinuation<Cause, Never>) in
            lock.lock()
            if let cause {
                lock.unlock()
                continuation.resume(returning: cause)
            } else {
                waiter = continuation
                lock.unlock()
            }
        }
    }
}
