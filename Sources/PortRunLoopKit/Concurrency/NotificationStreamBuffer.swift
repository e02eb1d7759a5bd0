import DequeModule
import Foundation
import Synchronization

/// The shared state behind a ``NotificationStream``: the bounded buffer the observer fills, the one
/// waiting consumer, the counts, and the observation that feeds it.
///
/// Thread-safety: `Sendable`; everything is guarded by `state`. The observer calls ``receive(_:)``
/// on its delivery thread; consumers call ``next(isolation:)`` from any task.
final class NotificationStreamBuffer: Sendable {
    private struct State {
        var buffer: Deque<NotificationBox> = []
        var waiter: CheckedContinuation<NotificationBox?, Never>?
        var observation: NotificationObservation?
        var isFinished = false
        var received = 0
        var delivered = 0
        var dropped = 0
    }

    let limit: Int
    let overflow: NotificationStream.OverflowPolicy
    private let state = TracedMutex(State())

    init(limit: Int, overflow: NotificationStream.OverflowPolicy) {
        self.limit = limit
        self.overflow = overflow
    }

    /// Hands over the observation that feeds the buffer (ended with the stream).
    func attach(_ observation: NotificationObservation) {
        let late = state.withLock { state -> NotificationObservation? in
            if state.isFinished { return observation }
            state.observation = observation
            return nil
        }
        late?.remove()
    }

    /// Observer side: one matching notification was posted.
    func receive(_ box: NotificationBox) {
        let waiter = state.withLock { state -> CheckedContinuation<NotificationBox?, Never>? in
            guard !state.isFinished else { return nil }
            state.received += 1
            if let waiter = state.waiter {
                state.waiter = nil
                state.delivered += 1
                return waiter
            }
            if state.buffer.count < limit {
                state.buffer.append(box)
            } else {
                state.dropped += 1
                switch overflow {
                case .dropNewest:
                    break
                case .dropOldest:
                    state.buffer.removeFirst()
                    state.buffer.append(box)
                }
            }
            return nil
        }
        waiter?.resume(returning: box)
    }

    /// Consumer side: the next notification, waiting for one if the buffer is empty; nil once the
    /// stream ended and its buffer is empty, or when the waiting task is cancelled.
    func next(isolation actor: isolated (any Actor)?) async -> NotificationBox? {
        enum Immediate { case value(NotificationBox), end, wait }
        let immediate = state.withLock { state -> Immediate in
            if let first = state.buffer.popFirst() {
                state.delivered += 1
                return .value(first)
            }
            return state.isFinished ? .end : .wait
        }
        switch immediate {
        case .value(let box): return box
        case .end: return nil
        case .wait: break
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation(isolation: actor) { (continuation: CheckedContinuation<NotificationBox?, Never>) in
                let answer = state.withLock { state -> Immediate in
                    if let first = state.buffer.popFirst() {
                        state.delivered += 1
                        return .value(first)
                    }
                    if state.isFinished { return .end }
                    Misuse.check(state.waiter == nil,
                                 "NotificationStream: two tasks are iterating the same stream at once; iterate it from one task")
                    state.waiter = continuation
                    return .wait
                }
                switch answer {
                case .value(let box): continuation.resume(returning: box)
                case .end: continuation.resume(returning: nil)
                case .wait: break
                }
            }
        } onCancel: {
            finish()
        }
    }

    /// Ends the stream: stops observing, wakes a waiting consumer with nil. Notifications still
    /// buffered stay readable.
    func finish() {
        let (observation, waiter) = state.withLock { state -> (NotificationObservation?, CheckedContinuation<NotificationBox?, Never>?) in
            state.isFinished = true
            defer { state.observation = nil; state.waiter = nil }
            return (state.observation, state.waiter)
        }
        observation?.remove()
        waiter?.resume(returning: nil)
    }

    var statistics: NotificationStream.Statistics {
        state.withLock { state in
            NotificationStream.Statistics(received: state.received, delivered: state.delivered, dropped: state.dropped,
                                          buffered: state.buffer.count,
                                          isFinished: state.isFinished)
        }
    }
}
