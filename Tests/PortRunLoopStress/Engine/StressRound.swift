import Foundation
import PortRunLoopKit
import Synchronization

/// One round of a stress run: K consumers, N producers × M operations, chaos, teardown, verification.
///
/// Thread-safety: `Sendable`; shared state is behind `Locked`/`Atomic`.
final class StressRound: Sendable {
    let config: StressConfiguration
    let index: Int
    let seed: UInt64
    /// The consumers currently serving, one per slot.
    let slots: Locked<[StressConsumer]>
    /// Every consumer and port of the round, retired or not, for verification.
    let allConsumers = Locked<[StressConsumer]>([])
    let allPorts = Locked<[StressPort]>([])
    private let nextUID = Atomic<Int>(0)
    let threadsStarted = Atomic<Int>(0)
    let threadsJoined = Atomic<Int>(0)
    let relaySucceeded = Atomic<Int>(0)
    let relayFailed = Atomic<Int>(0)
    /// Violations found while running (hangs, impossible outcomes), reported with the rest.
    let runtimeViolations = Locked<[String]>([])
    /// Per producer: the operation it is in (for the hang diagnostic).
    let progress: Locked<[String]>
    let notifications: StressNotifications?
    /// The fd-source and timer parts (nil when turned off in the configuration).
    let fileDescriptors: StressFileDescriptors?
    let timers: StressTimers?
    /// The observer and custom-source part (nil when turned off in the configuration).
    let callouts: StressCallouts?
    /// What the source chaos thread (or the round's end) is doing, for the hang diagnostic.
    let sourceProgress = Locked<String>("not started")
    /// Producer operations done so far (paces the source chaos thread).
    let sourceOpsDone = StressCondition<Int>(0)

    init(config: StressConfiguration, index: Int) {
        self.config = config
        self.index = index
        self.seed = SeededGenerator.derive(config.seed, UInt64(index))
        self.slots = Locked([])
        self.progress = Locked(Array(repeating: "not started", count: config.producers))
        self.notifications = config.notifications ? StressNotifications(producers: config.producers) : nil
        self.fileDescriptors = config.fileDescriptors ? StressFileDescriptors(config: config, roundSeed: seed) : nil
        self.timers = config.timers ? StressTimers(config: config, roundSeed: seed) : nil
        self.callouts = config.observersAndSources ? StressCallouts(config: config, roundSeed: seed) : nil
    }

    func uid() -> Int { nextUID.add(1, ordering: .relaxed).newValue }

    func runtimeViolation(_ text: String) { runtimeViolations.withLock { $0.append(text) } }

    /// Makes a consumer with its ports and registers it everywhere.
    func makeConsumer(rng: inout SeededGenerator) -> StressConsumer {
        let consumer = StressConsumer(id: uid(), usePlainThread: rng.chance(50), producers: config.producers)
        threadsStarted.add(1, ordering: .relaxed)
        var ports: [StressPort] = []
        for _ in 0..<config.portsPerLoop {
            ports.append(consumer.addPort(uid: uid(), producers: config.producers,
                                          queueLimit: Int.random(in: 1...8, using: &rng), common: rng.chance(50)))
        }
        consumer.ports.withLock { $0 = ports }
        allPorts.withLock { $0.append(contentsOf: ports) }
        allConsumers.withLock { $0.append(consumer) }
        notifications?.consumerStarted(consumer, round: self)
        fileDescriptors?.consumerStarted(consumer)
        callouts?.consumerStarted(consumer)
        return consumer
    }

    func retire(_ consumer: StressConsumer) {
        notifications?.consumerRetiring(consumer)
        fileDescriptors?.consumerRetiring(consumer)
        timers?.consumerRetiring(consumer)
        callouts?.consumerRetiring(consumer)
        if consumer.retire(timeout: config.roundTimeout) {
            threadsJoined.add(1, ordering: .relaxed)
        } else {
            runtimeViolation("consumer c\(consumer.id): its thread did not exit within \(config.roundTimeout)s of being retired (hang)")
        }
    }

    /// Chaos: replaces port `index` of a random consumer with a fresh one, then invalidates the old.
    func invalidatePort(rng: inout SeededGenerator) {
        let consumer = pickConsumer(rng: &rng)
        let limit = Int.random(in: 1...8, using: &rng)
        let common = rng.chance(50)
        let portIndex = Int.random(in: 0..<config.portsPerLoop, using: &rng)
        let replacement = consumer.addPort(uid: uid(), producers: config.producers, queueLimit: limit, common: common)
        allPorts.withLock { $0.append(replacement) }
        let old = consumer.ports.withLock { ports -> StressPort in
            let old = ports[portIndex]
            ports[portIndex] = replacement
            return old
        }
        old.invalidateForChaos()
    }

    /// Chaos: replaces a random consumer with a fresh one, then retires the old (thread exit or
    /// RunLoopThread.stop).
    func replaceConsumer(rng: inout SeededGenerator) {
        let slot = Int.random(in: 0..<config.loops, using: &rng)
        let fresh = makeConsumer(rng: &rng)
        let old = slots.withLock { slots -> StressConsumer in
            let old = slots[slot]
            slots[slot] = fresh
            return old
        }
        retire(old)
    }

    func pickConsumer(rng: inout SeededGenerator) -> StressConsumer {
        let slot = Int.random(in: 0..<config.loops, using: &rng)
        return slots.withLock { $0[slot] }
    }

    /// Runs the round and returns every producer's log.
    func run() -> [StressProducerLog] {
        var setupRNG = SeededGenerator(seed: SeededGenerator.derive(seed, 0xC0FFEE))
        let consumers = (0..<config.loops).map { _ in makeConsumer(rng: &setupRNG) }
        slots.withLock { $0 = consumers }
        notifications?.roundStarted(round: self, rng: &setupRNG)

        let logs = Locked<[StressProducerLog?]>(Array(repeating: nil, count: config.producers))
        let start = Latch()
        var producers: [JoinableThread] = []
        for p in 0..<config.producers {
            let producerSeed = SeededGenerator.derive(seed, UInt64(p) + 1)
            let sourceSeed = SeededGenerator.derive(producerSeed, 0x5_0CE5)
            let calloutSeed = SeededGenerator.derive(producerSeed, 0xCA_11)
            producers.append(JoinableThread(name: "stress-p\(p)") { [self] in
                start.wait()
                var producer = StressProducer(index: p, round: self, rng: SeededGenerator(seed: producerSeed),
                                              sourceRNG: SeededGenerator(seed: sourceSeed),
                                              calloutRNG: SeededGenerator(seed: calloutSeed))
                producer.run()
                logs.withLock { $0[p] = producer.log }
            })
            threadsStarted.add(1, ordering: .relaxed)
        }
        var sourceChaos: JoinableThread?
        if StressSourceChaos.actions(for: config) > 0 {
            let chaosSeed = SeededGenerator.derive(seed, 0x50_C4A0)
            sourceChaos = JoinableThread(name: "stress-chaos") { [self] in StressSourceChaos.run(round: self, seed: chaosSeed) }
            threadsStarted.add(1, ordering: .relaxed)
        }
        for _ in 0..<config.producers { start.open() }
        for (p, thread) in producers.enumerated() {
            if thread.join(timeout: config.roundTimeout) {
                threadsJoined.add(1, ordering: .relaxed)
            } else {
                runtimeViolation("producer p\(p) did not finish within \(config.roundTimeout)s: \(progress.withLock { $0[p] }) (hang)")
            }
        }
        if let sourceChaos {
            if sourceChaos.join(timeout: config.roundTimeout) {
                threadsJoined.add(1, ordering: .relaxed)
            } else {
                runtimeViolation("the source chaos thread did not finish within \(config.roundTimeout)s: \(sourceProgress.withLock { $0 }) (hang)")
            }
        }
        notifications?.producersFinished(round: self)
        fileDescriptors?.producersFinished(round: self)
        timers?.producersFinished(round: self)
        callouts?.producersFinished(round: self)
        for consumer in slots.withLock({ $0 }) { retire(consumer) }
        fileDescriptors?.roundFinished()
        notifications?.roundFinished(round: self)
        return logs.withLock { $0.map { $0 ?? StressProducerLog() } }
    }
}
