import Foundation
import PortRunLoopKit

/// An actor pinned to one consumer's loop through the loop's `SerialExecutor` (issue 4).
///
/// Thread-safety: an actor; its methods run on the loop's thread (or, once the loop has shut down,
/// on the loop's after-shutdown queue, still isolated).
actor StressPinnedActor {
    let consumer: StressConsumer
    nonisolated var unownedExecutor: UnownedSerialExecutor { consumer.loop.unownedExecutor }

    init(consumer: StressConsumer) { self.consumer = consumer }

    /// Records the call like a `performAndWait` body; a run off the loop's thread is a violation
    /// unless the loop was shut down (executor jobs fail over, in order, instead of being lost).
    func record(producer: Int, seq: UInt32, round: StressRound) -> UInt32 {
        if !consumer.loop.isCurrentThread && !consumer.loop.isShutDown {
            round.runtimeViolation("actor job p\(producer) seq \(seq) ran off c\(consumer.id)'s thread while its loop was alive")
        }
        consumer.called.withLock { $0[producer].append(seq) }
        return seq &* 2 &+ 1
    }
}

/// The async operations of a producer: `submit` (async perform) and an actor hop through the
/// loop's executor. Both share `performAndWait`'s bookkeeping (`log.calls`, `consumer.called`), so
/// the verifier checks them the same way: a call that returned ran its body exactly once; one that
/// failed with `loopShutDown` never ran it.
extension StressProducer {
    /// Waits on this (plain, non-pool) producer thread for an async operation started in a task.
    private func awaitOnThisThread<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
        let result = Locked<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let outcome: Result<T, any Error>
            do { outcome = .success(try await operation()) } catch { outcome = .failure(error) }
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait() // bounded by the round's watchdog, which reports a hang with every producer's step
        return result.withLock { $0! }
    }

    mutating func submit(seq: UInt32) {
        let consumer = round.pickConsumer(rng: &rng)
        let producer = index
        let round = self.round
        note("submit seq \(seq) on c\(consumer.id)")
        let result = awaitOnThisThread { [consumer] in
            try await consumer.loop.submit { () -> UInt32 in
                if !consumer.loop.isCurrentThread {
                    round.runtimeViolation("submit p\(producer) seq \(seq) ran off c\(consumer.id)'s thread")
                }
                consumer.called.withLock { $0[producer].append(seq) }
                return seq &* 2 &+ 1
            }
        }
        let outcome: StressProducerLog.CallOutcome
        switch result {
        case .success(let value):
            outcome = value == seq &* 2 &+ 1 ? .returned : .other("submit returned a wrong value \(value)")
        case .failure(PortRunLoopError.loopShutDown):
            outcome = .shutDown
            if !consumer.retiring.load(ordering: .sequentiallyConsistent) {
                log.shutDownWhileAlive.append("submit seq \(seq) to c\(consumer.id) failed with loopShutDown although the consumer was not retiring")
            }
        case .failure(let error):
            outcome = .other("submit failed unexpectedly: \(error)")
        }
        log.calls[consumer.id, default: []].append((seq, outcome))
        log.submits += 1
    }

    mutating func actorHop(seq: UInt32) {
        let consumer = round.pickConsumer(rng: &rng)
        let producer = index
        let round = self.round
        note("actor hop seq \(seq) to c\(consumer.id)")
        let result = awaitOnThisThread { [consumer] in
            await StressPinnedActor(consumer: consumer).record(producer: producer, seq: seq, round: round)
        }
        let outcome: StressProducerLog.CallOutcome
        switch result {
        case .success(let value): outcome = value == seq &* 2 &+ 1 ? .returned : .other("actor hop returned a wrong value \(value)")
        case .failure(let error): outcome = .other("actor hop failed: \(error)")
        }
        log.calls[consumer.id, default: []].append((seq, outcome))
        log.actorHops += 1
    }
}
