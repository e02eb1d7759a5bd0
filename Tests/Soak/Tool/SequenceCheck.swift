import Foundation
import PortRunLoopKit
import Synchronization

/// One sender's numbered messages to one receiver, where the documentation promises first in,
/// first out, exactly once: the sender numbers each message with ``next`` and calls
/// ``accepted()`` once the library took it (a refused message's number is used again, so refusals
/// leave no hole); the receiver calls ``received(_:)``. A number above the one expected is a gap:
/// lost, unless `onGap` accounts for it otherwise; a number below it is a duplicate or a
/// reordering (a violation). ``finish(tail:)`` settles what never came.
///
/// Thread-safety: `Sendable`; one sender thread and one receiver thread at a time.
final class SequenceCheck: Sendable {
    let name: String
    private let ledger: SoakLedger
    private let onGap: (@Sendable (Range<UInt64>) -> Void)?
    private let state = TracedMutex(State())

    private struct State {
        var accepted: UInt64 = 0
        var expected: UInt64 = 0
        var finished = false
    }

    /// - Parameter onGap: accounts for numbers skipped by the receiver (default: lost).
    init(_ name: String, ledger: SoakLedger, onGap: (@Sendable (Range<UInt64>) -> Void)? = nil) {
        self.name = name
        self.ledger = ledger
        self.onGap = onGap
    }

    /// The number the sender's next message carries.
    var next: UInt64 { state.withLock { $0.accepted } }

    /// The message numbered ``next`` was accepted: it must be delivered.
    func accepted() {
        state.withLock { $0.accepted += 1 }
        ledger.sent()
    }

    /// Messages accepted and not received yet.
    var outstanding: UInt64 { state.withLock { $0.accepted &- min($0.expected, $0.accepted) } }

    /// The receiver got message `sequence`.
    func received(_ sequence: UInt64) {
        let expected = state.withLock { state -> UInt64 in
            defer { if sequence >= state.expected { state.expected = sequence + 1 } }
            return state.expected
        }
        if sequence == expected {
            ledger.delivered()
        } else if sequence > expected {
            ledger.delivered()
            if let onGap { onGap(expected..<sequence) } else { ledger.lost(Int(sequence - expected), "\(name): \(expected)..<\(sequence) never came (\(sequence) did)") }
        } else {
            ledger.violation("\(name): \(sequence) came after \(expected - 1) (duplicate or out of order)")
        }
    }

    /// Settles what was accepted and never came: counted as `tail` drops when given, else lost.
    /// Once.
    func finish(tail: String? = nil) {
        let missing = close()
        guard missing > 0 else { return }
        if let tail { ledger.dropped(tail, missing) } else { ledger.lost(missing, "\(name): the last \(missing) never came") }
    }

    /// Ends the stream without counting anything: how many were accepted and never came (the
    /// caller accounts for them). 0 after the first call.
    func close() -> Int {
        state.withLock { state -> Int in
            guard !state.finished else { return 0 }
            state.finished = true
            return state.accepted > state.expected ? Int(state.accepted - state.expected) : 0
        }
    }
}

/// The numbered messages one observer that comes and goes got from one sender whose numbers it
/// did not see from the start: delivery is promised from the number given to ``begin(mustFrom:)``
/// (the sender's next number once the observation was in effect) until the observer's end, in
/// order, without gaps. Deliveries may come before ``begin(mustFrom:)`` is called.
///
/// Thread-safety: `Sendable`; one receiver thread, and the thread that begins and ends it.
final class JoinedSequence: Sendable {
    let name: String
    private let ledger: SoakLedger
    private let state = TracedMutex(State())

    private struct State {
        var mustFrom: UInt64?
        var first: UInt64?
        var last: UInt64?
    }

    init(_ name: String, ledger: SoakLedger) {
        self.name = name
        self.ledger = ledger
    }

    /// Delivery is promised from `mustFrom` on.
    func begin(mustFrom: UInt64) {
        let first = state.withLock { state in
            state.mustFrom = mustFrom
            return state.first
        }
        if let first, first > mustFrom { missing(from: mustFrom, to: first, "the first to come was \(first)") }
    }

    /// The receiver got message `sequence`.
    func received(_ sequence: UInt64) {
        ledger.sent()
        ledger.delivered()
        let (mustFrom, last) = state.withLock { state in
            defer {
                state.last = sequence
                if state.first == nil { state.first = sequence }
            }
            return (state.mustFrom, state.last)
        }
        if let last {
            if sequence <= last { ledger.violation("\(name): \(sequence) came after \(last) (duplicate or out of order)") }
            let from = max(last + 1, mustFrom ?? 0)
            if sequence > from { missing(from: from, to: sequence, "\(sequence) did") }
        } else if let mustFrom, sequence > mustFrom {
            missing(from: mustFrom, to: sequence, "the first to come was \(sequence)")
        }
    }

    /// The observer ended: everything numbered below `promisedUpTo` (from the promise on) must
    /// have come.
    func finish(promisedUpTo: UInt64) {
        let (mustFrom, last) = state.withLock { ($0.mustFrom, $0.last) }
        var firstMissing = mustFrom ?? promisedUpTo
        if let last { firstMissing = max(firstMissing, last + 1) }
        if promisedUpTo > firstMissing { missing(from: firstMissing, to: promisedUpTo, "they were posted before its thread was stopped") }
    }

    private func missing(from: UInt64, to: UInt64, _ why: String) {
        ledger.sent(Int(to - from))
        ledger.lost(Int(to - from), "\(name): \(from)..<\(to) never came (\(why))")
    }
}
