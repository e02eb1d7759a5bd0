import Foundation
import PortRunLoopKit

/// Why a running ``RunLoopThreadService`` goes on to stop its thread: the first of "the thread
/// ended" and "graceful shutdown or cancellation asked for it" to happen. A one-shot: the first
/// ``fire(_:)`` wins and later ones are ignored.
///
/// Thread-safety: `Sendable`: `cause` and `waiter` are behind one ``TracedMutex``. ``fire(_:)``
/// from any thread, ``wait()`` from one task at a time.
final class StopReason: Sendable {
    enum Cause: Sendable, Equatable {
        case threadEnded
        case stopRequested
    }

    private struct State {
        var cause: Cause?
        var waiter: CheckedContinuation<Cause, Never>?
    }

    private let state = TracedMutex(State())

    /// Records `cause` unless a cause was already recorded, and wakes the waiter.
    func fire(_ cause: Cause) {
        let waiter = state.withLock { state -> CheckedContinuation<Cause, Never>? in
            guard state.cause == nil else { return nil }
            state.cause = cause
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: cause)
    }

    /// The first cause fired, waiting for it if none was yet.
    func wait() async -> Cause {
        await withCheckedContinuation { (continuation: CheckedContinuation<Cause, Never>) in
            let cause = state.withLock { state -> Cause? in
                if state.cause == nil { state.waiter = continuation }
                return state.cause
            }
            if let cause { continuation.resume(returning: cause) }
        }
    }
}
