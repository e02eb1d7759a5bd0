import Foundation
import PortRunLoopKit
import Synchronization

/// The notification part of a stress round: posts, observer add/remove and their checks.
/// (Filled in once the thread notification center has landed.)
///
/// Thread-safety: `Sendable`.
final class StressNotifications: Sendable {
    init(producers: Int) {}
    func consumerStarted(_ consumer: StressConsumer, round: StressRound) {}
    func consumerRetiring(_ consumer: StressConsumer) {}
    func roundStarted(round: StressRound, rng: inout SeededGenerator) {}
    func producersFinished(round: StressRound) {}
    func roundFinished(round: StressRound) {}
    func producerOperation(producer: Int, seq: UInt32, roll: Int, round: StressRound,
                           rng: inout SeededGenerator, log: inout StressProducerLog) {
        log.notificationsPosted += 0
    }
    func verify(round: StressRound, logs: [StressProducerLog], into report: inout StressReport) {}
}
