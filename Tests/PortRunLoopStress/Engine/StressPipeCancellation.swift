import Foundation
import PortRunLoopKit

/// How a stress pipe is cancelled from a thread other than its loop's, and what happened.
///
/// 1. **Seal**: under the writer lock, the current length of the byte stream becomes the pipe's
///    cancellation point; producer writes are refused from then on.
/// 2. **Drain**: wait (bounded) until the handler has read every byte written before the seal —
///    the level-triggered guarantee (F2): bytes in a watched pipe make its handler run. A timeout
///    is a violation (readiness lost); a consumer that begins retiring waives the wait (its loop
///    shuts down and cancels the source; its remaining bytes need not arrive).
/// 3. **Leave it ready** (most of the time): the canceller writes a burst of records after the
///    seal, and either lets a lazy handler nibble at it or *holds* the handler (it returns without
///    reading) and waits until the loop called it at least once more: the fd is then ready on
///    every turn while `cancel()` runs.
/// 4. **Cancel**, then set the marker at once (``StressCancelMarker``).
/// 5. **Settle**: two `performAndWait` round trips on the loop; after the first no call can still
///    be in flight, so any later start is a violation; the second gives the loop one more turn
///    with the fd still ready.
///
/// Thread-safety: ``StressPipe/cancelFromOtherThread(rng:seqs:timeout:round:)`` runs on one
/// canceller thread per pipe (the pipe is taken out of the live list first).
extension StressPipe {
    struct Cancellation: Sendable {
        var sealedAt = 0
        /// The drain wait timed out with bytes written before the seal still undelivered.
        var drainTimedOut = false
        /// The consumer began retiring before the drain completed.
        var waived = false
        var burst = 0
        var held = false
        /// Bytes written but not read when `cancel()` returned (> 0: cancelled while ready).
        var unreadAtCancel = 0
    }

    func cancelFromOtherThread(rng: inout SeededGenerator, seqs: Range<Int>, timeout: Double,
                               round: StressRound) -> Cancellation {
        var outcome = Cancellation()
        outcome.sealedAt = writer.withLock { log in
            log.sealedAt = log.sealedAt ?? log.bytes.count
            return log.sealedAt!
        }
        guard let source else {
            outcome.waived = true // never watched: the consumer's loop was shut down (checked by the verifier)
            return outcome
        }
        let target = outcome.sealedAt
        round.sourceProgress.withLock { $0 = "draining \(label) up to byte \(target)" }
        if !records.state.wait(seconds: timeout, until: { $0.delivered.count >= target || $0.waived }) {
            outcome.drainTimedOut = true
            let delivered = records.state.snapshot.delivered.count
            round.runtimeViolation("fd \(label): only \(delivered) of the \(target) bytes written before the seal "
                + "were read within \(timeout)s although the loop was running (readiness lost)")
        }
        outcome.waived = records.state.snapshot.waived
        if !outcome.waived && rng.chance(80) {
            outcome.held = reading == .eager || rng.chance(50)
            let heldBefore = records.state.update { state -> Int in
                state.hold = outcome.held
                return state.heldCalls
            }
            outcome.burst = write(writerIndex: StressPipeRecord.canceller, seqs: seqs, bypassSeal: true)
            if outcome.held && outcome.burst > 0 {
                round.sourceProgress.withLock { $0 = "waiting for held \(label) to be reported ready" }
                if !records.state.wait(seconds: timeout, until: { $0.heldCalls > heldBefore || $0.waived }) {
                    round.runtimeViolation("fd \(label): \(outcome.burst) record(s) left unread, but the handler "
                        + "was not called within \(timeout)s (level-triggered readiness lost)")
                }
            }
        }
        round.sourceProgress.withLock { $0 = "cancelling \(label)" }
        source.cancel()
        records.marker.cancelled()
        if !source.isCancelled { round.runtimeViolation("fd \(label): isCancelled is false after cancel() returned") }
        let written = writer.withLock { $0.bytes.count }
        outcome.unreadAtCancel = written - records.state.snapshot.delivered.count
        round.sourceProgress.withLock { $0 = "settling \(label) (round trips on c\(consumer.id))" }
        if (try? consumer.loop.performAndWait({})) != nil {
            records.marker.settled()
            _ = try? consumer.loop.performAndWait({})
        } else {
            records.marker.settled() // loopShutDown: a dead loop runs no handler
        }
        return outcome
    }
}
