import Foundation
import PortRunLoopKit
import Synchronization

/// The fd-source part of a stress round: every consumer gets ``StressConfiguration/pipesPerLoop``
/// watched pipes or socketpairs when it starts (watched from the thread that starts it); producers
/// write records into random live pipes; the source chaos thread cancels random live pipes while
/// they are ready (``StressPipe/cancelFromOtherThread(rng:seqs:timeout:round:)``) and puts a new
/// pipe on a random consumer; when the producers are done every live pipe is cancelled the same
/// way; when every consumer thread has joined every fd is closed.
///
/// Choices (kind, reading, modes, bursts) come from generators derived from the round's seed and
/// the pipe's number.
///
/// Thread-safety: `Sendable`; the registry is behind a lock, counters are atomics.
final class StressFileDescriptors: Sendable {
    struct Registry: Sendable {
        /// Pipes that may be written to and are not being cancelled, in creation order.
        var live: [StressPipe] = []
        /// Every pipe of the round, with its cancellation (nil: cancelled by its loop's shutdown).
        var all: [StressPipe] = []
        var cancellations: [Int: StressPipe.Cancellation] = [:]
        /// Consumers that began retiring.
        var retiring: Set<Int> = []
    }

    let registry = Locked(Registry())
    let seed: UInt64
    let pipesPerLoop: Int
    /// How long a canceller waits for a handler before reporting lost readiness.
    let timeout: Double
    private let nextID = Atomic<Int>(0)
    private let cancellerSeq = Atomic<Int>(0)
    let fdsOpened = Atomic<Int>(0)
    let fdsClosed = Atomic<Int>(0)
    let problems = Locked<[String]>([])
    /// Set once the round's end has cancelled every pipe: the final retirements then change nothing.
    private let settled = Atomic<Bool>(false)

    init(config: StressConfiguration, roundSeed: UInt64) {
        self.seed = SeededGenerator.derive(roundSeed, 0xFD_0000)
        self.pipesPerLoop = config.pipesPerLoop
        self.timeout = max(config.roundTimeout / 8, 1)
    }

    /// Hook: a consumer started (from the thread that made it).
    func consumerStarted(_ consumer: StressConsumer) {
        for _ in 0..<pipesPerLoop { addPipe(on: consumer) }
    }

    /// Hook: `consumer` is about to retire: its pipes leave the live list and no longer have to
    /// deliver everything (its loop's shutdown cancels their sources).
    func consumerRetiring(_ consumer: StressConsumer) {
        guard !settled.load(ordering: .acquiring) else { return }
        let pipes = registry.withLock { registry -> [StressPipe] in
            registry.retiring.insert(consumer.id)
            registry.live.removeAll { $0.consumer === consumer }
            return registry.all.filter { $0.consumer === consumer }
        }
        for pipe in pipes { pipe.records.waive() }
    }

    /// Watches a new pipe on `consumer` from the calling thread.
    func addPipe(on consumer: StressConsumer) {
        let id = nextID.add(1, ordering: .relaxed).newValue
        var rng = SeededGenerator(seed: SeededGenerator.derive(seed, UInt64(id)))
        let kind: StressPipe.Kind = rng.chance(50) ? .pipe : .socketpair
        let reading: StressPipe.Reading = rng.chance(60) ? .eager : .lazy
        let modes: [RunLoop.Mode] = rng.chance(60) ? [.common] : [.default]
        var failure: String?
        guard let pipe = StressPipe(id: id, consumer: consumer, kind: kind, reading: reading, modes: modes, failure: &failure) else {
            problems.withLock { $0.append("fd: could not open a \(kind.rawValue): \(failure ?? "?")") }
            return
        }
        fdsOpened.add(2, ordering: .relaxed)
        let retiring = registry.withLock { registry -> Bool in
            registry.all.append(pipe)
            let retiring = registry.retiring.contains(consumer.id)
            if pipe.source != nil && !retiring { registry.live.append(pipe) }
            return retiring
        }
        if retiring { pipe.records.waive() }
    }

    /// Producer operation: writes 1–4 records (sequence numbers from `seq`) into a random live pipe
    /// of a random consumer.
    func producerWrite(producer: Int, seq: inout Int, rng: inout SeededGenerator, round: StressRound) {
        let consumer = round.pickConsumer(rng: &rng)
        let pipes = registry.withLock { $0.live.filter { $0.consumer === consumer } }
        let pick = Int.random(in: 0..<max(pipes.count, 1), using: &rng)
        let count = Int.random(in: 1...4, using: &rng)
        guard pick < pipes.count else { return }
        pipes[pick].write(writerIndex: producer, seqs: seq..<(seq + count))
        seq += count
    }

    /// Source chaos: cancels a random live pipe from this thread while it is ready, then watches a
    /// new one on a random consumer. False when there was no live pipe.
    @discardableResult
    func cancelAndReplace(rng: inout SeededGenerator, round: StressRound) -> Bool {
        let pick = Int.random(in: 0..<1_000_000, using: &rng)
        guard let pipe = registry.withLock({ registry -> StressPipe? in
            guard !registry.live.isEmpty else { return nil }
            return registry.live.remove(at: pick % registry.live.count)
        }) else { return false }
        cancel(pipe, rng: &rng, round: round)
        addPipe(on: round.pickConsumer(rng: &rng))
        return true
    }

    /// Hook: the producers (and the source chaos thread) have finished: cancels every live pipe.
    func producersFinished(round: StressRound) {
        var rng = SeededGenerator(seed: SeededGenerator.derive(seed, 0xE0D))
        let pipes = registry.withLock { registry -> [StressPipe] in
            defer { registry.live.removeAll() }
            return registry.live
        }
        for pipe in pipes { cancel(pipe, rng: &rng, round: round) }
        settled.store(true, ordering: .releasing)
    }

    private func cancel(_ pipe: StressPipe, rng: inout SeededGenerator, round: StressRound) {
        let burst = Int.random(in: 3...24, using: &rng)
        let first = cancellerSeq.add(burst, ordering: .relaxed).newValue - burst
        let outcome = pipe.cancelFromOtherThread(rng: &rng, seqs: first..<(first + burst), timeout: timeout, round: round)
        registry.withLock { $0.cancellations[pipe.id] = outcome }
    }

    /// Hook: every consumer thread has joined (no handler can run): closes every fd.
    func roundFinished() {
        for pipe in registry.withLock({ $0.all }) {
            if let source = pipe.source, !source.isCancelled {
                problems.withLock { $0.append("fd \(pipe.label): its source is not cancelled after its loop shut down") }
            }
            let failures = pipe.closeFileDescriptors()
            fdsClosed.add(2 - failures.count, ordering: .relaxed)
            if !failures.isEmpty { problems.withLock { $0.append(contentsOf: failures.map { "fd \(pipe.label): \($0)" }) } }
        }
    }
}
