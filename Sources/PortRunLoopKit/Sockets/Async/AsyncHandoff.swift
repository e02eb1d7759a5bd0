import DequeModule

/// The buffer between a loop that produces (a connection's reads, a listener's connections) and
/// the one task that consumes them through an `AsyncSequence`: a queue bounded by weight (bytes,
/// or a count), the one waiting consumer, the end (clean or an error), and counts. The shape of
/// ``NotificationStreamBuffer``, with what a stream needs besides: the producer learns when the
/// buffer passes its limit (``PushOutcome/held``, to pause its source) and the consumer when it
/// drained to half of it again (to resume the source).
///
/// Thread-safety: `Sendable`; everything is guarded by `state`. ``push(_:refusingPastLimit:)``
/// and ``finish(_:)`` from the producer's thread, ``next(isolation:whenReleased:whenCancelled:)``
/// from one task at a time, ``cancel()`` and ``statistics`` from anywhere.
final class AsyncHandoff<Element: Sendable>: Sendable {
    typealias Waiter = CheckedContinuation<Delivery, Never>

    /// What a waiting consumer is resumed with.
    enum Delivery {
        case element(Element)
        case end(StreamConnectionError?)
        /// Something arrived while it was about to wait: look again.
        case again
    }

    /// What became of a pushed element.
    enum PushOutcome: Equatable {
        /// Handed to the waiting consumer, or buffered within the limit.
        case taken
        /// Buffered, and the buffer just passed its limit: the producer should hold off until the
        /// consumer releases it.
        case held
        /// Not taken: the handoff ended, or (when refusing) the buffer is full.
        case refused
    }

    /// Counts since the handoff was made, in weight units (bytes, or elements).
    struct Counts: Equatable {
        var received = 0
        var delivered = 0
        var buffered = 0
        var holds = 0
        var refused = 0
        var isEnded = false
    }

    private struct State {
        var items: Deque<Element> = []
        var waiter: Waiter?
        /// nil while open; then how it ended (an error is reported once, then the end is clean).
        var ending: Result<Void, StreamConnectionError>?
        var isHolding = false
        var counts = Counts()
    }

    let limit: Int
    private let weigh: @Sendable (Element) -> Int
    private let state = TracedMutex(State())

    init(limit: Int, weigh: @escaping @Sendable (Element) -> Int) {
        InternalFailure.check(limit > 0, "the buffer limit must be positive, got \(limit)")
        self.limit = limit
        self.weigh = weigh
    }

    /// Producer side: hands `element` to the waiting consumer or buffers it. With
    /// `refusingPastLimit`, an element that would take the buffer past the limit is refused.
    func push(_ element: Element, refusingPastLimit: Bool) -> PushOutcome {
        let weight = weigh(element)
        let (outcome, waiter) = state.withLock { state -> (PushOutcome, Waiter?) in
            guard state.ending == nil else { state.counts.refused += 1; return (.refused, nil) }
            if let waiter = state.waiter {
                state.waiter = nil
                state.counts.received += weight
                state.counts.delivered += weight
                return (.taken, waiter)
            }
            if refusingPastLimit, state.counts.buffered + weight > limit {
                state.counts.refused += 1
                return (.refused, nil)
            }
            state.items.append(element)
            state.counts.received += weight
            state.counts.buffered += weight
            guard !state.isHolding, state.counts.buffered > limit else { return (.taken, nil) }
            state.isHolding = true
            state.counts.holds += 1
            return (.held, nil)
        }
        waiter?.resume(returning: .element(element))
        return outcome
    }

    /// Ends the handoff (the first end stays): buffered elements are still returned, then the
    /// consumer gets nil, or `error` once.
    func finish(_ error: StreamConnectionError?) {
        let waiter = state.withLock { state -> Waiter? in
            guard state.ending == nil else { return nil }
            state.counts.isEnded = true
            defer { state.waiter = nil }
            guard let waiter = state.waiter else {
                state.ending = error.map { .failure($0) } ?? .success(())
                return nil
            }
            state.ending = .success(()) // the error goes to the waiter now
            return waiter
        }
        waiter?.resume(returning: .end(error))
    }

    /// Ends the handoff and drops what it buffered (its elements are released here); a waiting
    /// consumer gets nil. Returns whether it was still open.
    @discardableResult
    func cancel() -> Bool {
        let (wasOpen, waiter, dropped) = state.withLock { state -> (Bool, Waiter?, Deque<Element>) in
            let wasOpen = state.ending == nil
            state.ending = .success(())
            state.counts.isEnded = true
            state.counts.buffered = 0
            state.isHolding = false
            defer { state.waiter = nil; state.items = [] }
            return (wasOpen, state.waiter, state.items)
        }
        waiter?.resume(returning: .end(nil))
        _ = dropped
        return wasOpen
    }

    private enum Immediate {
        case value(Element, released: Bool)
        case end(StreamConnectionError?)
        case wait
    }

    /// With the lock held: the next buffered element (and whether taking it released a hold), the
    /// end, or nothing yet.
    private func take(_ state: inout State) -> Immediate {
        if let first = state.items.popFirst() {
            let weight = weigh(first)
            state.counts.buffered -= weight
            state.counts.delivered += weight
            let released = state.isHolding && state.counts.buffered <= limit / 2
            if released { state.isHolding = false }
            return .value(first, released: released)
        }
        switch state.ending {
        case nil: return .wait
        case .success: return .end(nil)
        case .failure(let error):
            state.ending = .success(())
            return .end(error)
        }
    }

    /// Consumer side: the next element, waiting for one; nil once ended and drained (after the
    /// ending error, thrown once). A task that is cancelled (before or while waiting) cancels the
    /// handoff, runs `whenCancelled` and gets nil. `whenReleased` runs when taking an element
    /// ended a hold (the producer may resume).
    func next(isolation actor: isolated (any Actor)?, whenReleased: () -> Void,
              whenCancelled: @escaping @Sendable () -> Void) async throws(StreamConnectionError) -> Element? {
        while true {
            if Task.isCancelled {
                if cancel() { whenCancelled() }
                return nil
            }
            switch state.withLock({ take(&$0) }) {
            case .value(let element, let released):
                if released { whenReleased() }
                return element
            case .end(let error):
                if let error { throw error }
                return nil
            case .wait:
                break
            }
            let delivery = await withTaskCancellationHandler {
                await withCheckedContinuation(isolation: actor) { (continuation: Waiter) in
                    let waits = state.withLock { state -> Bool in
                        // Something arrived since the look above: take it in the next round.
                        guard state.items.isEmpty, state.ending == nil else { return false }
                        Misuse.check(state.waiter == nil,
                                     "two tasks are iterating one sequence at once; iterate it from one task")
                        state.waiter = continuation
                        return true
                    }
                    if !waits { continuation.resume(returning: .again) }
                }
            } onCancel: {
                if cancel() { whenCancelled() }
            }
            switch delivery {
            case .element(let element): return element
            case .end(let error):
                if let error { throw error }
                return nil
            case .again: continue
            }
        }
    }

    /// A snapshot of the counts.
    var statistics: Counts { state.withLock { $0.counts } }
}
