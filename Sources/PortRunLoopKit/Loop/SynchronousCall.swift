import Synchronization

/// One ``PortRunLoop/performAndWait(timeout:_:)`` in flight.
///
/// State machine (guarded by `state`): pending → running → finished, or pending → cancelled
/// (timeout) / failed (loop shut down). The body is dropped the moment it can no longer run, which
/// `withoutActuallyEscaping` requires: once the waiter returns, nothing may still refer to it.
///
/// The waiter is woken through its own loop's doorbell when it has a loop (it is then running the
/// private `.synchronousWait` mode and serving calls made to it), or through `condition` otherwise.
///
/// Thread-safety: `Sendable`; the body runs on the target loop's thread only.
final class SynchronousCall<T: Sendable>: SynchronousCallProtocol, @unchecked Sendable {
    private enum State: Sendable {
        case pending(@Sendable () throws -> T)
        case running
        case finished(Result<T, any Error>)
        case withdrawn(PortRunLoopError)
    }

    private let state: TracedMutex<State>
    private let waiterLoop: PortRunLoop?
    private let condition: ConditionLock?

    init(body: @escaping @Sendable () throws -> T, waiter: PortRunLoop?) {
        self.state = TracedMutex(.pending(body))
        self.waiterLoop = waiter
        self.condition = waiter == nil ? ConditionLock() : nil
    }

    func run() {
        // The body is taken out, called and released inside this closure, so no reference to it
        // survives to the moment the waiter is woken (and leaves `withoutActuallyEscaping`).
        let result: Result<T, any Error>? = {
            let body: (@Sendable () throws -> T)? = state.withLock { state in
                guard case .pending(let body) = state else { return nil }
                state = .running
                return body
            }
            guard let body else { return nil }
            return Result { try body() }
        }()
        guard let result else { return }
        finish(.finished(result))
    }

    func fail(_ error: PortRunLoopError) {
        let changed = state.withLock { state -> Bool in
            guard case .pending = state else { return false }
            state = .withdrawn(error)
            return true
        }
        if changed { wakeWaiter() }
    }

    private func finish(_ newState: State) {
        state.withLock { $0 = newState }
        wakeWaiter()
    }

    private func wakeWaiter() {
        if let condition {
            condition.withLock { condition.broadcast() }
        } else {
            waiterLoop?.wakeUp()
        }
    }

    private var isDone: Bool {
        state.withLock { state in
            switch state {
            case .finished, .withdrawn: true
            case .pending, .running: false
            }
        }
    }

    /// Blocks until the call finished or was withdrawn. At `deadline` a call that has not started
    /// is withdrawn with ``PortRunLoopError/timedOut``; one that has started is waited for.
    func waitForCompletion(deadline: Double) {
        var deadline = deadline
        while true {
            if let loop = waiterLoop {
                _ = loop.runSpecific(mode: .synchronousWait, deadline: deadline,
                                     returnAfterSourceHandled: false, until: { self.isDone })
            } else if let condition {
                condition.withLock {
                    while !isDone {
                        if !condition.wait(untilMonotonic: deadline), System.monotonicSeconds() >= deadline { break }
                    }
                }
            }
            if isDone { return }
            if System.monotonicSeconds() >= deadline {
                fail(.timedOut)
                deadline = .infinity
            }
        }
    }

    func takeResult() throws -> T {
        try state.withLock { state -> T in
            switch state {
            case .finished(let result):
                return try result.get()
            case .withdrawn(let error):
                throw error
            case .pending, .running:
                preconditionFailure("PortRunLoop: synchronous call result read before completion")
            }
        }
    }
}
