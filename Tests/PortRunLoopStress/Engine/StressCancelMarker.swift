import Synchronization

/// The "cancelled" marker of one fd source or timer: set by whoever cancelled it right after
/// `cancel()` / `invalidate()` returned, and checked by the handler each time it starts. A start
/// after the marker is a start after cancellation returned: a violation ("ran after cancel").
///
/// One start may legitimately observe the marker: a call the library let in *before* the
/// cancellation closed its gate, which reaches its first instruction a moment after `cancel()`
/// returned (Semantics.md F3/T4: "a call already running may finish"). Handlers here never run the
/// loop nested, so at most one call can be in flight; the marker therefore stores the number of
/// starts counted when the cancellation returned, and excuses exactly one start beyond it (counted
/// as ``inFlightAtCancel``). Any second start, and any start after ``settled()`` (called once a
/// `performAndWait` round trip on the owning loop proved that call had finished), is a violation.
/// The blind spot is a single wrong start that is never followed by another; a level-triggered
/// ready fd or a 0.1 ms repeating timer would start again on the next turn.
///
/// Thread-safety: `Sendable`; lock-free atomics.
final class StressCancelMarker: Sendable {
    private let starts = Atomic<Int>(0)
    private let startsAtCancel = Atomic<Int>(-1)
    private let quiet = Atomic<Bool>(false)
    /// Handler starts after the cancellation returned (violations).
    let startedAfterCancel = Atomic<Int>(0)
    /// Starts excused as the one call that was in flight when the cancellation returned.
    let inFlightAtCancel = Atomic<Int>(0)

    /// Called first thing in every handler call.
    func handlerStarted() {
        let count = starts.add(1, ordering: .sequentiallyConsistent).newValue
        if quiet.load(ordering: .sequentiallyConsistent) {
            startedAfterCancel.add(1, ordering: .relaxed)
            return
        }
        let atCancel = startsAtCancel.load(ordering: .sequentiallyConsistent)
        guard atCancel >= 0, count > atCancel else { return }
        if count == atCancel + 1 {
            inFlightAtCancel.add(1, ordering: .relaxed)
        } else {
            startedAfterCancel.add(1, ordering: .relaxed)
        }
    }

    /// Called right after `cancel()` / `invalidate()` returned (only the first call counts).
    func cancelled() {
        _ = startsAtCancel.compareExchange(expected: -1, desired: starts.load(ordering: .sequentiallyConsistent),
                                           ordering: .sequentiallyConsistent)
    }

    /// Called once no call can be in flight any more: after a round trip on the owning loop, or by
    /// a handler that cancelled its own source (it is the only call in flight).
    func settled() { quiet.store(true, ordering: .sequentiallyConsistent) }

    /// Whether ``cancelled()`` was called.
    var isCancelled: Bool { startsAtCancel.load(ordering: .acquiring) >= 0 }
}
