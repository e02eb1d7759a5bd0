import Foundation

/// What the observer and custom-source part of a stress run did and found (see
/// ``StressConfiguration/observersAndSources``).
///
/// Thread-safety: a value type; `Sendable`.
public struct StressCalloutCounts: Sendable {
    /// Run-loop observers added (the consumers' clocks included), of them one-shot, and handler
    /// calls; rounds of calls (one activity of one pass, as the clocks saw them).
    /// Thread-safety: a field of a value type (`Sendable`).
    public var observersAdded = 0, oneShotObservers = 0, observerCalls = 0, observerRounds = 0
    /// Observers invalidated from other threads (of them, repeating ones invalidated right after a
    /// call, while being called), removed from their mode from other threads, and calls excused as
    /// the one in flight when `invalidate()` returned.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var observersInvalidated = 0, observersInvalidatedWhileCalled = 0, observersRemoved = 0, observersInFlightAtInvalidate = 0
    /// Observer violations: calls after `invalidate()` returned (or after a removal was applied),
    /// calls off the loop's thread or in a mode the observer is not in, activities out of CF's
    /// order, calls out of `order` within a round, one-shots called twice or never, observers still
    /// valid after their loop shut down, runs seen entered but never exited.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var observersAfterInvalidate = 0, observersWrongThread = 0, observersWrongMode = 0, observersOutOfSequence = 0,
        observersOutOfOrder = 0, oneShotsCalledTwice = 0, oneShotsNeverCalled = 0, observersValidAfterShutDown = 0, observerRunsNotExited = 0

    /// Custom sources added, signals, performs, signals merged into a perform with others, wake-ups
    /// the producers sent after signalling, and signals the chaos thread waited to see performed.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var sourcesAdded = 0, signals = 0, performs = 0, signalsMerged = 0, signalWakeUps = 0, signalsAwaited = 0
    /// Sources invalidated from other threads (of them, found still signalled just before),
    /// removed from their mode from other threads, and performs excused as the one in flight when
    /// `invalidate()` returned.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var sourcesInvalidated = 0, sourcesInvalidatedWhileSignalled = 0, sourcesRemoved = 0, sourcesInFlightAtInvalidate = 0
    /// Source violations: performs after `invalidate()` returned (or after a removal was applied),
    /// off the loop's thread or in a mode the source is not in, twice in one pass, signals never
    /// performed, `schedule`/`cancel` calls that do not pair up, sources still valid after their
    /// loop shut down.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var sourcesAfterInvalidate = 0, sourcesWrongThread = 0, sourcesWrongMode = 0, sourcesTwicePerPass = 0,
        lostSignals = 0, sourceCallbacksUnpaired = 0, sourcesValidAfterShutDown = 0

    /// Thread-safety: a value type.
    public init() {}

    /// Every count, added field by field.
    ///
    /// Thread-safety: a value type.
    public static func += (lhs: inout StressCalloutCounts, rhs: StressCalloutCounts) {
        for field in Self.fields { lhs[keyPath: field] += rhs[keyPath: field] }
    }

    private static var fields: [WritableKeyPath<StressCalloutCounts, Int>] { [
        \.observersAdded, \.oneShotObservers, \.observerCalls, \.observerRounds,
        \.observersInvalidated, \.observersInvalidatedWhileCalled, \.observersRemoved, \.observersInFlightAtInvalidate,
        \.observersAfterInvalidate, \.observersWrongThread, \.observersWrongMode, \.observersOutOfSequence,
        \.observersOutOfOrder, \.oneShotsCalledTwice, \.oneShotsNeverCalled, \.observersValidAfterShutDown, \.observerRunsNotExited,
        \.sourcesAdded, \.signals, \.performs, \.signalsMerged, \.signalWakeUps, \.signalsAwaited,
        \.sourcesInvalidated, \.sourcesInvalidatedWhileSignalled, \.sourcesRemoved, \.sourcesInFlightAtInvalidate,
        \.sourcesAfterInvalidate, \.sourcesWrongThread, \.sourcesWrongMode, \.sourcesTwicePerPass,
        \.lostSignals, \.sourceCallbacksUnpaired, \.sourcesValidAfterShutDown,
    ] }

    /// The report's lines for this part.
    var lines: [String] {
        ["observers: added=\(observersAdded) (one-shot=\(oneShotObservers)) calls=\(observerCalls) rounds=\(observerRounds) "
            + "invalidated=\(observersInvalidated) (while called=\(observersInvalidatedWhileCalled)) removed=\(observersRemoved) "
            + "in-flight-at-invalidate=\(observersInFlightAtInvalidate)",
         "observers: after-invalidate=\(observersAfterInvalidate) wrong-thread=\(observersWrongThread) wrong-mode=\(observersWrongMode) "
            + "out-of-sequence=\(observersOutOfSequence) out-of-order=\(observersOutOfOrder) one-shot twice=\(oneShotsCalledTwice) "
            + "never=\(oneShotsNeverCalled) valid-after-shutdown=\(observersValidAfterShutDown) runs-not-exited=\(observerRunsNotExited)",
         "sources: added=\(sourcesAdded) signals=\(signals) performs=\(performs) merged=\(signalsMerged) wake-ups=\(signalWakeUps) "
            + "awaited=\(signalsAwaited) invalidated=\(sourcesInvalidated) (while signalled=\(sourcesInvalidatedWhileSignalled)) "
            + "removed=\(sourcesRemoved) in-flight-at-invalidate=\(sourcesInFlightAtInvalidate)",
         "sources: after-invalidate=\(sourcesAfterInvalidate) wrong-thread=\(sourcesWrongThread) wrong-mode=\(sourcesWrongMode) "
            + "twice-per-pass=\(sourcesTwicePerPass) lost-signals=\(lostSignals) unpaired-schedule/cancel=\(sourceCallbacksUnpaired) "
            + "valid-after-shutdown=\(sourcesValidAfterShutDown)"]
    }
}
