import Synchronization

/// One ``PortRunLoop/submit(_:)`` in flight: the body, and the continuation of the task awaiting it.
///
/// State machine (guarded by `state`):
/// created → queued (continuation attached, item on the loop's queue) → started → (resumed);
/// created → cancelledEarly (the task was cancelled before the continuation was attached) → resumed
/// with `CancellationError` when it is attached; queued → withdrawn by a cancellation
/// (`CancellationError`) or by the loop's shutdown (``PortRunLoopError/loopShutDown``).
/// The body is released the moment it can no longer run, and the continuation is resumed exactly
/// once. A withdrawn item stays in the loop's queue as a no-op until the loop reaches it.
///
/// Thread-safety: `Sendable`; the body runs on the target loop's thread only.
final class AsyncCall<T: Sendable>: QueuedCall {
    private enum State {
        case created(@Sendable () throws -> T)
        case queued(@Sendable () throws -> T, CheckedContinuation<T, any Error>)
        case cancelledEarly
        case started
        case withdrawn
    }

    private let state: TracedMutex<State>

    /// A `submit` body runs while its loop's thread waits in a blocking call, like a
    /// `performAndWait` body.
    var servedWhileWaiting: Bool { true }

    init(_ body: @escaping @Sendable () throws -> T) {
        state = TracedMutex(.created(body))
    }

    /// Attaches the awaiting task's continuation. Returns false (and resumes it with
    /// `CancellationError`) when the task was cancelled first; the call must then not be queued.
    func attach(_ continuation: CheckedContinuation<T, any Error>) -> Bool {
        let attached = state.withLock { state -> Bool in
            switch state {
            case .created(let body):
                state = .queued(body, continuation)
                return true
            case .cancelledEarly:
                state = .withdrawn
                return false
            case .queued, .started, .withdrawn:
                InternalFailure.fail("PortRunLoop.submit: continuation attached twice")
            }
        }
        if !attached { continuation.resume(throwing: CancellationError()) }
        return attached
    }

    /// The awaiting task was cancelled: withdraws the call unless its body already started.
    func cancel() {
        let continuation = state.withLock { state -> CheckedContinuation<T, any Error>? in
            switch state {
            case .created:
                state = .cancelledEarly
                return nil
            case .queued(_, let continuation):
                state = .withdrawn
                return continuation
            case .cancelledEarly, .started, .withdrawn:
                return nil
            }
        }
        continuation?.resume(throwing: CancellationError())
    }

    /// Owner thread: runs the body unless withdrawn, and resumes the task with its outcome.
    func run() {
        let taken = state.withLock { state -> (@Sendable () throws -> T, CheckedContinuation<T, any Error>)? in
            guard case .queued(let body, let continuation) = state else { return nil }
            state = .started
            return (body, continuation)
        }
        guard let (body, continuation) = taken else { return }
        continuation.resume(with: Result { try body() })
    }

    /// Withdraws the call with `error` unless its body already started.
    func fail(_ error: PortRunLoopError) {
        let continuation = state.withLock { state -> CheckedContinuation<T, any Error>? in
            guard case .queued(_, let continuation) = state else { return nil }
            state = .withdrawn
            return continuation
        }
        continuation?.resume(throwing: error)
    }
}
