import Foundation
import PortRunLoopKit

/// An actor pinned to one consumer's loop through the loop's `SerialExecutor`.
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
        consumer.recordAsyncCall("actor job", producer: producer, seq: seq, round: round,
                                 allowedOffThread: consumer.loop.isShutDown)
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
        asyncCall("submit", seq: seq) { consumer, producer, round in
            try await consumer.loop.submit {
                consumer.recordAsyncCall("submit", producer: producer, seq: seq, round: round, allowedOffThread: false)
            }
        }
        log.submits += 1
    }

    mutating func actorHop(seq: UInt32) {
        asyncCall("actor hop", seq: seq) { consumer, producer, round in
            await StressPinnedActor(consumer: consumer).record(producer: producer, seq: seq, round: round)
        }
        log.actorHops += 1
    }

    /// Runs one async call (`what`) on a picked consumer and logs its outcome for the verifier: it
    /// must return `seq * 2 + 1` (the body ran once), or fail with `loopShutDown` only while that
    /// consumer is retiring.
    private mutating func asyncCall(
        _ what: String, seq: UInt32,
        _ call: @escaping @Sendable (StressConsumer, Int, StressRound) async throws -> UInt32
    ) {
        let consumer = round.pickConsumer(rng: &rng)
        let producer = index
        let round = self.round
        note("\(what) seq \(seq) on c\(consumer.id)")
        let result = awaitOnThisThread { [consumer] in try await call(consumer, producer, round) }
        let outcome: StressProducerLog.CallOutcome
        switch result {
        case .success(let value):
            outcome = value == seq &* 2 &+ 1 ? .returned : .other("\(what) returned a wrong value \(value)")
        case .failure(PortRunLoopError.loopShutDown):
            outcome = .shutDown
            if !consumer.retiring.load(ordering: .sequentiallyConsistent) {
                log.shutDownWhileAlive.append("\(what) seq \(seq) to c\(consumer.id) failed with loopShutDown although the consumer was not retiring")
            }
        case .failure(let error):
            outcome = .other("\(what) failed unexpectedly: \(error)")
        }
        log.calls[consumer.id, default: []].append((seq, outcome))
    }
}

extension StressConsumer {
    /// The body of an async call (`what`): records it like a `performAndWait` body and returns
    /// `seq * 2 + 1`. Running off this consumer's thread is a violation unless `allowedOffThread`
    /// (asked only then).
    func recordAsyncCall(_ what: String, producer: Int, seq: UInt32, round: StressRound,
                         allowedOffThread: @autoclosure () -> Bool) -> UInt32 {
        if !loop.isCurrentThread && !allowedOffThread() {
            round.runtimeViolation("\(what) p\(producer) seq \(seq) ran off c\(id)'s thread")
        }
        called.withLock { $0[producer].append(seq) }
        return seq &* 2 &+ 1
    }
}
