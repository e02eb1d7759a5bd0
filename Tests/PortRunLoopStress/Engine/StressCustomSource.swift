import Foundation
import PortRunLoopKit
import Synchronization

/// One custom input source (``RunLoopSource``) of a stress round, on a consumer's loop, in the
/// default mode, the common modes, or a mode no one runs (it must never perform), of order -1...1.
/// Producers signal it many times, each followed by a wake-up most of the time.
///
/// **No lost signal** is checked with tickets from one counter per source: a signal takes its
/// ticket *before* it calls `signal()`, a `perform` takes one when it starts. The library sets
/// the flag after the signal's ticket and clears it before the `perform` that covers it starts, so
/// every signal must be followed by a `perform` with a greater ticket (V4); the engine waits for
/// one at the round's end, and for the signals the chaos thread makes mid-round.
///
/// `perform` also checks the loop's thread, the mode, that it runs while scheduled in a mode
/// (`schedule`/`cancel` bookkeeping, V1), at most once per pass (the loop's clock, see
/// ``StressCalloutLoop``), and its start against the ``StressCancelMarker``.
///
/// Thread-safety: `Sendable`; the callbacks run on the consumer's thread, everything else anywhere.
final class StressCustomSource: Sendable {
    struct State: Sendable {
        var signals = 0
        var performs = 0
        /// Signals that came between two performs, beyond the first (merged into one perform).
        var merged = 0
        var lastSignalTicket = 0
        var lastPerformTicket = 0
        var signalsAtLastPerform = 0
        var lastPerformClock = 0
        var twicePerPass = 0
        var schedules = 0, cancels = 0
        /// The modes `schedule` was called for and `cancel` not yet.
        var scheduled: Set<RunLoop.Mode> = []
        var problems: [String] = []
        var invalidatedByEngine = false
        var removedByEngine = false
        var waived = false
        /// The engine waited in vain for a perform after a signal (already reported).
        var lostReported = false
    }

    /// What the callbacks record, kept apart from the source so they do not retain it.
    final class Records: Sendable {
        let state = StressCondition(State())
        let ticket = Atomic<Int>(0)
        let marker = StressCancelMarker()
        let wrongThread = Atomic<Int>(0)
        let wrongMode = Atomic<Int>(0)

        func note(_ state: inout State, _ text: String) {
            if state.problems.count < 3 { state.problems.append(text) }
        }
    }

    let id: Int
    let consumer: StressConsumer
    let order: Int
    let placement: StressObserver.Placement
    let source: RunLoopSource
    let records = Records()

    init(id: Int, consumer: StressConsumer, loopState: StressCalloutLoop, order: Int, placement: StressObserver.Placement) {
        self.id = id
        self.consumer = consumer
        self.order = order
        self.placement = placement
        let records = self.records
        // The loop's own `isCurrentThread`, not `PortRunLoop.current`: `cancel` also runs in the
        // loop's shutdown when its thread exits, where the thread no longer has a current loop.
        let bookkeeping: @Sendable (Bool) -> @Sendable (PortRunLoop, RunLoop.Mode) -> Void = { [consumer] joining in
            { loop, mode in
                if loop !== consumer.loop || !loop.isCurrentThread { records.wrongThread.add(1, ordering: .relaxed) }
                records.state.update { state in
                    if joining {
                        state.schedules += 1
                        if !state.scheduled.insert(mode).inserted { records.note(&state, "schedule called twice for \(mode.rawValue)") }
                    } else {
                        state.cancels += 1
                        if state.scheduled.remove(mode) == nil { records.note(&state, "cancel called for \(mode.rawValue), never scheduled") }
                    }
                }
            }
        }
        source = RunLoopSource(order: order, schedule: bookkeeping(true), cancel: bookkeeping(false)) { [loopState, consumer] _ in
            records.marker.handlerStarted()
            let ticket = records.ticket.add(1, ordering: .sequentiallyConsistent).newValue
            guard consumer.loop.isCurrentThread else {
                records.wrongThread.add(1, ordering: .relaxed)
                return
            }
            if placement == .neverRun || consumer.loop.currentMode != .default { records.wrongMode.add(1, ordering: .relaxed) }
            let clock = loopState.clock.load(ordering: .relaxed)
            // The last polling turn of a retiring RunLoopThread runs a pass the clock cannot see.
            let retiring = consumer.retiring.load(ordering: .acquiring)
            records.state.update { state in
                state.performs += 1
                state.merged += max(0, state.signals - state.signalsAtLastPerform - 1)
                state.signalsAtLastPerform = state.signals
                state.lastPerformTicket = max(state.lastPerformTicket, ticket)
                if clock > 0 && clock == state.lastPerformClock && !retiring {
                    state.twicePerPass += 1
                    records.note(&state, "performed twice in one pass (clock \(clock))")
                }
                state.lastPerformClock = clock
                if state.scheduled.isEmpty { records.note(&state, "performed while scheduled in no mode (after cancel)") }
            }
        }
    }

    var mode: RunLoop.Mode {
        switch placement {
        case .default: .default
        case .common: .common
        case .neverRun: StressConsumer.privateMode
        }
    }

    func add() { consumer.loop.add(source, forMode: mode) }

    /// Signals the source from the calling thread (ticket first, see the type's comment) and
    /// returns the signal's ticket.
    @discardableResult
    func signal() -> Int {
        let ticket = records.ticket.add(1, ordering: .sequentiallyConsistent).newValue
        source.signal()
        records.state.update { state in
            state.signals += 1
            state.lastSignalTicket = max(state.lastSignalTicket, ticket)
        }
        return ticket
    }

    /// Invalidates the source from the calling thread; sets the marker as soon as it returned.
    func invalidateFromOtherThread() {
        records.state.update { $0.invalidatedByEngine = true }
        source.invalidate()
        records.marker.cancelled()
    }

    /// Removes the source from its one mode from the calling thread (applied before the loop's
    /// next turn: a perform may still start until a round trip).
    func removeFromOtherThread() {
        records.state.update { $0.removedByEngine = true }
        consumer.loop.remove(source, forMode: mode)
    }

    /// Whether the engine may still expect performs: not invalidated, removed or retired, in a
    /// mode the consumer runs.
    var isLive: Bool {
        let state = records.state.snapshot
        return placement != .neverRun && !state.invalidatedByEngine && !state.removedByEngine && !state.waived
    }

    /// "source 7 (order 1, common, c3)" for violations.
    var label: String { "custom source \(id) (order \(order), \(placement.rawValue), c\(consumer.id))" }
}
