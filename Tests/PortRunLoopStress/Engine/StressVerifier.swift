import Foundation
import PortRunLoopKit

/// Checks a finished round: exactly-once, FIFO per producer, rejected ⇔ never delivered, nothing
/// after invalidation, counts agreeing with the ports' own statistics.
///
/// Thread-safety: used by one thread after every producer and consumer thread joined.
struct StressVerifier {
    let round: StressRound
    let logs: [StressProducerLog]

    /// Compares what arrived with what was accepted for one (producer, target) stream. `delivered`
    /// must be a prefix of `accepted` (so: no duplicate, no reordering, nothing rejected or unknown,
    /// and a discarded tail only); every accepted item carrying the must bit must have arrived
    /// unless `discardAllowed`.
    static func compare(what: String, accepted: [UInt32], rejected: Set<UInt32>, delivered: [UInt32],
                        discardAllowed: Bool, into report: inout StressReport) {
        let plain = accepted.map { $0 & ~StressTag.mustBit }
        let isPrefix = delivered.count <= plain.count && zip(delivered, plain).allSatisfy { $0 == $1 }
        if !isPrefix {
            let acceptedIndex = Dictionary(plain.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
            var seen = Set<UInt32>()
            var duplicates = 0, rejectedDelivered = 0, unknown = 0, reordered = 0
            var lastIndex = -1
            for seq in delivered {
                if !seen.insert(seq).inserted { duplicates += 1; continue }
                if rejected.contains(seq) { rejectedDelivered += 1; continue }
                guard let index = acceptedIndex[seq] else { unknown += 1; continue }
                if index < lastIndex { reordered += 1 }
                lastIndex = max(lastIndex, index)
            }
            // A gap (an accepted item skipped while later ones arrived) is a lost item: counted below
            // if it had to arrive; otherwise it is an out-of-order discard.
            let gaps = delivered.count == seen.count && duplicates == 0 && reordered == 0 && unknown == 0 && rejectedDelivered == 0
            report.duplicated += duplicates
            report.rejectedButDelivered += rejectedDelivered
            report.reordered += reordered
            let firstDiff = zip(delivered, plain).enumerated().first { $0.element.0 != $0.element.1 }
            let at = firstDiff.map { "index \($0.offset): delivered \($0.element.0), accepted \($0.element.1)" } ?? "length"
            report.violation("\(what): delivered sequence is not a prefix of the accepted one (\(at)); "
                + "duplicates=\(duplicates) reordered=\(reordered) rejected-but-delivered=\(rejectedDelivered) "
                + "never-sent=\(unknown)\(gaps ? " gap (an accepted item was skipped)" : "")")
            if gaps && discardAllowed {
                report.lost += 1 // a skipped item in the middle is lost even where a discarded tail is fine
            }
        }
        if !discardAllowed {
            let arrived = Set(delivered)
            let missing = accepted.filter { $0 & StressTag.mustBit != 0 && !arrived.contains($0 & ~StressTag.mustBit) }
            if !missing.isEmpty {
                report.lost += missing.count
                report.violation("\(what): \(missing.count) accepted item(s) never arrived, first seq \(missing[0] & ~StressTag.mustBit)")
            }
        }
    }

    func verify(into report: inout StressReport) {
        let producers = round.config.producers
        for text in round.runtimeViolations.withLock({ $0 }) { report.violation(text) }
        for log in logs {
            for text in log.shutDownWhileAlive { report.violation(text) }
            report.sendsAccepted += log.sendsAccepted
            report.sendsRejected += log.sendsRejected
            report.performsAccepted += log.performsAccepted
            report.performsRejected += log.rejectedPerforms
            report.loopStops += log.loopStops
            report.portInvalidations += log.invalidations
            report.consumerExits += log.exits
            report.notificationsPosted += log.notificationsPosted
            report.observersAdded += log.observersAdded
            report.observersRemoved += log.observersRemoved
        }

        // Ports.
        let kinds = Dictionary(uniqueKeysWithValues: round.allConsumers.withLock { $0 }.map { ($0.id, $0.isPlainThread ? "plain thread" : "RunLoopThread") })
        for port in round.allPorts.withLock({ $0 }) {
            let records = port.records
            let delivered = records.delivered.withLock { $0 }
            let invalidated = port.invalidatedByChaos.load(ordering: .acquiring)
            var accepted = 0, rejected = 0
            for p in 0..<producers {
                let acc = logs[p].acceptedSends[port.uid] ?? []
                let rej = logs[p].rejectedSends[port.uid] ?? []
                accepted += acc.count
                rejected += rej.count
                Self.compare(what: "port \(port.uid) (c\(port.consumerID), \(kinds[port.consumerID] ?? "?"), limit \(port.port.queueLimit)) from p\(p)", accepted: acc, rejected: rej,
                             delivered: delivered[p], discardAllowed: invalidated, into: &report)
            }
            let stats = port.port.statistics
            let deliveredCount = records.deliveredCount.load(ordering: .acquiring)
            report.messagesDelivered += deliveredCount
            report.messagesDiscarded += stats.discarded
            if stats.sent != accepted || stats.rejected != rejected {
                report.violation("port \(port.uid): statistics say sent=\(stats.sent) rejected=\(stats.rejected), producers saw accepted=\(accepted) rejected=\(rejected)")
            }
            if stats.delivered != deliveredCount {
                report.violation("port \(port.uid): statistics say delivered=\(stats.delivered), the handler ran \(deliveredCount) times")
            }
            if stats.queued != 0 || stats.delivered + stats.discarded != stats.sent {
                report.lost += stats.sent - stats.delivered - stats.discarded
                report.violation("port \(port.uid) (c\(port.consumerID), valid=\(port.port.isValid)): accepted messages neither delivered nor discarded: \(stats)")
            }
            let late = records.late.load(ordering: .acquiring)
            if late > 0 {
                report.lateDeliveries += late
                report.violation("port \(port.uid): \(late) handler call(s) started after invalidate() returned")
            }
            if records.wrongThread.load(ordering: .acquiring) > 0 {
                report.violation("port \(port.uid): handler ran on a thread other than its loop's")
            }
            if records.corrupt.load(ordering: .acquiring) > 0 {
                report.violation("port \(port.uid): \(records.corrupt.load(ordering: .acquiring)) corrupt payload(s)")
            }
        }

        for log in logs {
            report.submits += log.submits
            report.actorHops += log.actorHops
        }

        // Performs and synchronous calls.
        var relayBodies = 0
        for consumer in round.allConsumers.withLock({ $0 }) {
            let performed = consumer.performed.withLock { $0 }
            let called = consumer.called.withLock { $0 }
            relayBodies += consumer.relayBodies.load(ordering: .acquiring)
            for p in 0..<producers {
                let acc = logs[p].acceptedPerforms[consumer.id] ?? []
                report.performsRun += performed[p].count
                Self.compare(what: "perform c\(consumer.id) (\(consumer.isPlainThread ? "plain thread" : "RunLoopThread")) from p\(p)", accepted: acc, rejected: [],
                             delivered: performed[p], discardAllowed: false, into: &report)
                var ran = [UInt32: Int]()
                for seq in called[p] { ran[seq, default: 0] += 1 }
                for (seq, outcome) in logs[p].calls[consumer.id] ?? [] {
                    let times = ran.removeValue(forKey: seq) ?? 0
                    switch outcome {
                    case .returned, .rethrew:
                        if outcome == .returned { report.callsReturned += 1 } else { report.callsRethrew += 1 }
                        if times != 1 {
                            report.violation("performAndWait seq \(seq) p\(p) → c\(consumer.id) completed but its body ran \(times) times")
                            if times == 0 { report.lost += 1 } else { report.duplicated += times - 1 }
                        }
                    case .shutDown, .timedOut:
                        if outcome == .shutDown { report.callsShutDown += 1 } else { report.callsTimedOut += 1 }
                        if times != 0 {
                            report.violation("performAndWait seq \(seq) p\(p) → c\(consumer.id) failed (\(outcome)) but its body ran \(times) times")
                        }
                    case .other(let text):
                        report.violation("performAndWait seq \(seq) p\(p) → c\(consumer.id): \(text)")
                    }
                }
                if !ran.isEmpty {
                    report.violation("c\(consumer.id): \(ran.count) performAndWait bodies from p\(p) ran for calls nobody made")
                }
            }
        }
        let relayOK = round.relaySucceeded.load(ordering: .acquiring)
        report.relayCallsSucceeded += relayOK
        report.relayCallsFailed += round.relayFailed.load(ordering: .acquiring)
        if relayBodies != relayOK {
            report.violation("loop-to-loop calls: \(relayOK) returned but \(relayBodies) bodies ran")
        }
        report.threadsStarted += round.threadsStarted.load(ordering: .acquiring)
        report.threadsJoined += round.threadsJoined.load(ordering: .acquiring)
        if round.threadsStarted.load(ordering: .acquiring) != round.threadsJoined.load(ordering: .acquiring) {
            report.violation("round \(round.index): \(round.threadsStarted.load(ordering: .acquiring)) threads started, \(round.threadsJoined.load(ordering: .acquiring)) joined")
        }
        round.notifications?.verify(round: round, logs: logs, into: &report)
        round.fileDescriptors?.verify(into: &report)
        round.timers?.verify(into: &report)
        round.callouts?.verify(into: &report)
    }
}
