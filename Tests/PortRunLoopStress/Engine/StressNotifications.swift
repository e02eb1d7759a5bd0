import Foundation
import PortRunLoopKit
import Synchronization

/// The notification part of a stress round: posts (and post-and-waits) from the producers through a
/// `ThreadNotificationCenter`, observers on the consumer loops — stable ones made with each consumer,
/// transient ones added and removed by producers while traffic flows.
///
/// Checks, per observation: deliveries on its loop's thread only, only notifications matching its
/// name and sender filter, FIFO per posting thread with no duplicates and no gaps (Notifications.md
/// §2.2), nothing started after `remove()` + `waitForRunningHandlers` returned (§2.5), and, for
/// observations never removed, every post that began after the observation was added and returned
/// before its consumer started retiring delivered exactly once.
///
/// "Before/after" is decided with an epoch counter: adding an observation, removing one and retiring
/// a consumer each take a new epoch *after* (adding) or *before* (removing, retiring) the act; a
/// post reads the epoch before it starts and after it returned.
///
/// Thread-safety: `Sendable`.
final class StressNotifications: Sendable {
    static let names = [Notification.Name("stress.0"), Notification.Name("stress.1")]

    /// One observation and what its handler saw.
    final class Observation: Sendable {
        let uid: Int
        let consumerID: Int
        let name: Notification.Name?
        let senderFilter: String?
        let addEpoch = Atomic<Int>(.max)
        let removeEpoch = Atomic<Int>(.max)
        let closed = Atomic<Bool>(false)
        let late = Atomic<Int>(0)
        let wrong = Atomic<Int>(0)
        /// Per producer: sequence numbers in delivery order.
        let delivered: Locked<[[UInt32]]>
        let token: Locked<NotificationObservation?> = Locked(nil)

        init(uid: Int, consumerID: Int, name: Notification.Name?, senderFilter: String?, producers: Int) {
            self.uid = uid
            self.consumerID = consumerID
            self.name = name
            self.senderFilter = senderFilter
            self.delivered = Locked(Array(repeating: [], count: producers))
        }

        func matches(name: Notification.Name, sender: String) -> Bool {
            (self.name == nil || self.name == name) && (senderFilter == nil || senderFilter == sender)
        }
    }

    /// One post, as its producer saw it.
    struct Post: Sendable {
        let name: Notification.Name
        let seq: UInt32
        let epochBefore: Int, epochAfter: Int
        /// A postAndWait that timed out: deliveries not started by then were withdrawn, so any
        /// observer may or may not have received it.
        let withdrawn: Bool
    }

    let center = ThreadNotificationCenter()
    let epoch = Atomic<Int>(0)
    let observations = Locked<[Observation]>([])
    /// Per consumer id: the epoch its retirement began at (absent: not retiring).
    let retireEpochs = Locked<[Int: Int]>([:])
    /// Per producer: its posts, and the transient observations it may remove.
    let posts: Locked<[[Post]]>
    let transient: Locked<[[Observation]]>
    final class Counter: Sendable { let value = Atomic<Int>(0) }
    let delivered = Counter()
    let producers: Int
    private let nextUID = Atomic<Int>(0)

    init(producers: Int) {
        self.producers = producers
        self.posts = Locked(Array(repeating: [], count: producers))
        self.transient = Locked(Array(repeating: [], count: producers))
    }

    private func observe(consumer: StressConsumer, name: Notification.Name?, senderFilter: String?) -> Observation {
        let loopID = consumer.loopID
        // The epoch is taken after the observation exists; a post that read an epoch at or beyond
        // it started after the observer was registered.
        let uid = nextUID.add(1, ordering: .relaxed).newValue
        let record = Observation(uid: uid, consumerID: consumer.id, name: name, senderFilter: senderFilter, producers: producers)
        let token = center.addObserver(forName: name, object: senderFilter, on: consumer.loop) { [delivered] note in
            if record.closed.load(ordering: .acquiring) { record.late.add(1, ordering: .relaxed) }
            if ObjectIdentifier(PortRunLoop.current) != loopID { record.wrong.add(1, ordering: .relaxed) }
            guard let p = note.userInfo?["p"] as? Int, let seq = note.userInfo?["seq"] as? Int, p < record.delivered.snapshot.count,
                  record.matches(name: note.name, sender: note.object as? String ?? "?") else {
                record.wrong.add(1, ordering: .relaxed)
                return
            }
            record.delivered.withLock { $0[p].append(UInt32(seq)) }
            delivered.value.add(1, ordering: .relaxed)
        }
        record.addEpoch.store(epoch.add(1, ordering: .sequentiallyConsistent).newValue, ordering: .sequentiallyConsistent)
        record.token.withLock { $0 = token }
        observations.withLock { $0.append(record) }
        return record
    }

    /// Two stable observations per consumer: one name with any sender, any name from one producer.
    func consumerStarted(_ consumer: StressConsumer, round: StressRound) {
        _ = observe(consumer: consumer, name: Self.names[consumer.id % 2], senderFilter: nil)
        _ = observe(consumer: consumer, name: nil, senderFilter: "p\(consumer.id % producers)")
    }

    func consumerRetiring(_ consumer: StressConsumer) {
        let e = epoch.add(1, ordering: .sequentiallyConsistent).newValue
        retireEpochs.withLock { $0[consumer.id] = e }
    }

    func roundStarted(round: StressRound, rng: inout SeededGenerator) {}
    func producersFinished(round: StressRound) {}

    func roundFinished(round: StressRound) {
        for record in observations.snapshot { record.token.withLock { $0?.remove(); $0 = nil } }
    }

    /// A producer's notification operation (`roll` in 0..<166).
    func producerOperation(producer: Int, seq: UInt32, roll: Int, round: StressRound,
                           rng: inout SeededGenerator, log: inout StressProducerLog) {
        switch roll {
        case 0..<110:
            post(producer: producer, seq: seq, rng: &rng, wait: false, log: &log)
        case 110..<125:
            post(producer: producer, seq: seq, rng: &rng, wait: true, log: &log)
        case 125..<145:
            let consumer = round.pickConsumer(rng: &rng)
            let name: Notification.Name? = rng.chance(80) ? Self.names.randomElement(using: &rng)! : nil
            let sender: String? = rng.chance(30) ? "p\(Int.random(in: 0..<producers, using: &rng))" : nil
            let record = observe(consumer: consumer, name: name, senderFilter: sender)
            transient.withLock { $0[producer].append(record) }
            log.observersAdded += 1
        default:
            let record: Observation? = transient.withLock { list in
                list[producer].isEmpty ? nil : list[producer].remove(at: Int.random(in: 0..<list[producer].count, using: &rng))
            }
            guard let record, let token = record.token.withLock({ $0 }) else { return }
            record.removeEpoch.store(epoch.add(1, ordering: .sequentiallyConsistent).newValue, ordering: .sequentiallyConsistent)
            if rng.chance(50) {
                token.remove()
                _ = token.waitForRunningHandlers(timeout: .seconds(30))
            } else {
                _ = token.removeAndWait(timeout: .seconds(30))
            }
            // Removing twice is a documented no-op.
            if rng.chance(20) { token.remove() }
            record.closed.store(true, ordering: .releasing)
            log.observersRemoved += 1
        }
    }

    private func post(producer: Int, seq: UInt32, rng: inout SeededGenerator, wait: Bool, log: inout StressProducerLog) {
        let name = Self.names.randomElement(using: &rng)!
        let before = epoch.load(ordering: .sequentiallyConsistent)
        let info: [AnyHashable: Any] = ["p": producer, "seq": Int(seq)]
        var withdrawn = false
        if wait {
            do {
                _ = try center.postAndWait(name: name, object: "p\(producer)", userInfo: info, timeout: .milliseconds(200))
            } catch {
                withdrawn = true
            }
        } else {
            center.post(name: name, object: "p\(producer)", userInfo: info)
        }
        let after = epoch.load(ordering: .sequentiallyConsistent)
        posts.withLock { $0[producer].append(Post(name: name, seq: seq, epochBefore: before, epochAfter: after, withdrawn: withdrawn)) }
        log.notificationsPosted += 1
    }

    func verify(round: StressRound, logs: [StressProducerLog], into report: inout StressReport) {
        let allPosts = posts.snapshot
        let retire = retireEpochs.snapshot
        report.notificationsDelivered += delivered.value.load(ordering: .acquiring)
        for record in observations.snapshot {
            let what = "observation \(record.uid) (c\(record.consumerID), name \(record.name?.rawValue ?? "any"), sender \(record.senderFilter ?? "any"))"
            let late = record.late.load(ordering: .acquiring)
            if late > 0 {
                report.lateDeliveries += late
                report.violation("\(what): \(late) handler call(s) started after remove() returned")
            }
            if record.wrong.load(ordering: .acquiring) > 0 {
                report.violation("\(what): \(record.wrong.load(ordering: .acquiring)) deliveries on the wrong thread or not matching its filter")
            }
            let delivered = record.delivered.snapshot
            let addEpoch = record.addEpoch.load(ordering: .acquiring)
            // Removal discards what is queued for the observer and not yet started (§2.5), so only
            // observations never removed owe every post made while they were active; a removed one
            // still owes FIFO order, no duplicate and no gap (a discarded tail only).
            let removed = record.removeEpoch.load(ordering: .acquiring) != .max
            let end = removed ? Int.min : retire[record.consumerID] ?? .max
            for p in 0..<producers {
                let matching = allPosts[p].filter { record.matches(name: $0.name, sender: "p\(p)") && !$0.withdrawn }
                let withdrawn = Set(allPosts[p].filter(\.withdrawn).map(\.seq))
                let got = delivered[p].filter { !withdrawn.contains($0) }
                // The posts that must have arrived carry the must bit.
                let accepted = matching.map { post -> UInt32 in
                    post.epochBefore >= addEpoch && post.epochAfter < end ? post.seq | StressTag.mustBit : post.seq
                }
                // Posts racing the observer's addition may be skipped without breaking FIFO: compare
                // against the posts it could have seen, i.e. drop a leading run it never got.
                var window = accepted
                if let first = got.first, let start = accepted.firstIndex(where: { $0 & ~StressTag.mustBit == first }) {
                    window = Array(accepted[start...])
                }
                let before = report.violations.count
                StressVerifier.compare(what: "\(what) from p\(p)", accepted: window, rejected: [],
                                       delivered: got, discardAllowed: false, into: &report)
                if report.violations.count > before, ProcessInfo.processInfo.environment["STRESS_DEBUG"] != nil {
                    let arrived = Set(got)
                    let missing = matching.filter { $0.epochBefore >= addEpoch && $0.epochAfter < end && !arrived.contains($0.seq) }
                    print("DEBUG \(what) p\(p): add=\(addEpoch) remove=\(record.removeEpoch.load(ordering: .acquiring)) retire=\(retire[record.consumerID].map(String.init) ?? "-") missing=\(missing.prefix(3).map { "seq \($0.seq) e[\($0.epochBefore),\($0.epochAfter)]" }) delivered(first 5, last 5)=\(got.prefix(5)) … \(got.suffix(5)) posts matching=\(matching.count)")
                }
            }
        }
    }
}
