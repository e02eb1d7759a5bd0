import Foundation
import PortRunLoopKit
import Synchronization

/// One producer thread's work in a round: M operations chosen by its own seeded generator.
///
/// Thread-safety: owned by its producer thread.
struct StressProducer {
    struct BodyError: Error, Equatable { let seq: UInt32 }

    let index: Int
    let round: StressRound
    var rng: SeededGenerator
    /// The fd and timer operations' own generator (see `sourceOperation(step:)`).
    var sourceRNG: SeededGenerator
    /// The observer and custom-source operations' own generator (see `calloutOperation(step:)`).
    var calloutRNG: SeededGenerator
    /// The next sequence number of the records this producer writes into pipes.
    var pipeSeq = 0
    var log = StressProducerLog()

    init(index: Int, round: StressRound, rng: SeededGenerator, sourceRNG: SeededGenerator, calloutRNG: SeededGenerator) {
        self.index = index
        self.round = round
        self.rng = rng
        self.sourceRNG = sourceRNG
        self.calloutRNG = calloutRNG
    }

    func note(_ text: String) { round.progress.withLock { $0[index] = text } }

    mutating func run() {
        let items = round.config.itemsPerProducer
        let chaos = round.config.chaos
        let notifications = round.notifications
        for i in 0..<items {
            let seq = UInt32(i)
            let roll = Int.random(in: 0..<1000, using: &rng)
            switch roll {
            case 0..<300: send(seq: seq, timed: false)
            case 300..<315: submit(seq: seq)
            case 315..<330: actorHop(seq: seq)
            case 330..<450: send(seq: seq, timed: true)
            case 450..<680: perform(seq: seq)
            case 680..<760: performAndWait(seq: seq)
            case 760..<790 where ProcessInfo.processInfo.environment["NORELAY"] == nil: relay()
            case 790..<815:
                round.pickConsumer(rng: &rng).loop.stop()
                log.loopStops += 1
            case 815..<825:
                round.pickConsumer(rng: &rng).loop.wakeUp()
                log.wakeUps += 1
            case 825..<832 where chaos:
                note("op \(i): invalidating a port")
                round.invalidatePort(rng: &rng)
                log.invalidations += 1
            case 832..<834 where chaos:
                note("op \(i): retiring a consumer")
                round.replaceConsumer(rng: &rng)
                log.exits += 1
            case 834..<1000 where notifications != nil:
                note("op \(i): notification op")
                notifications!.producerOperation(producer: index, seq: seq, roll: roll - 834, round: round,
                                                 rng: &rng, log: &log)
            default:
                send(seq: seq, timed: false)
            }
            calloutOperation(step: i)
            sourceOperation(step: i)
        }
        note("finished")
    }

    mutating func send(seq: UInt32, timed: Bool) {
        let consumer = round.pickConsumer(rng: &rng)
        let port = consumer.ports.withLock { $0[Int.random(in: 0..<$0.count, using: &rng)] }
        let withPayload = rng.chance(20)
        let components = withPayload ? [StressTag.payload(producer: index, seq: Int(seq))] : []
        let date = timed ? Date(timeIntervalSinceNow: Double.random(in: 0...0.003, using: &rng)) : Date()
        note("send seq \(seq) to port \(port.uid) of c\(consumer.id)\(timed ? " (timed)" : "")")
        if port.port.send(before: date, msgid: StressTag.msgid(producer: index, seq: Int(seq)), components: components) {
            // Read after the send returned: if neither is set yet, the message must be delivered.
            let must = !consumer.retiring.load(ordering: .sequentiallyConsistent)
                && !port.invalidatedByChaos.load(ordering: .sequentiallyConsistent)
            log.acceptedSends[port.uid, default: []].append(must ? seq | StressTag.mustBit : seq)
            log.sendsAccepted += 1
        } else {
            log.rejectedSends[port.uid, default: []].insert(seq)
            log.sendsRejected += 1
        }
    }

    mutating func perform(seq: UInt32) {
        let consumer = round.pickConsumer(rng: &rng)
        let producer = index
        let modes: [RunLoop.Mode] = rng.chance(70) ? [.common] : [.default, StressConsumer.privateMode]
        note("perform seq \(seq) on c\(consumer.id)")
        let accepted = consumer.loop.perform(inModes: modes) { [consumer] in
            consumer.performed.withLock { $0[producer].append(seq) }
        }
        if accepted {
            let must = !consumer.retiring.load(ordering: .sequentiallyConsistent)
            log.acceptedPerforms[consumer.id, default: []].append(must ? seq | StressTag.mustBit : seq)
            log.performsAccepted += 1
        } else {
            log.rejectedPerforms += 1
            if !consumer.retiring.load(ordering: .sequentiallyConsistent) {
                round.runtimeViolation("perform to c\(consumer.id) returned false although the consumer was not retiring")
            }
        }
    }

    mutating func performAndWait(seq: UInt32) {
        let consumer = round.pickConsumer(rng: &rng)
        let producer = index
        let timeout: Duration? = rng.chance(50) ? nil : .milliseconds(Int.random(in: 0...100, using: &rng))
        let throwsError = rng.chance(10)
        note("performAndWait seq \(seq) on c\(consumer.id) timeout \(timeout.map { "\($0)" } ?? "none")")
        let outcome: StressProducerLog.CallOutcome
        do {
            let value = try consumer.loop.performAndWait(timeout: timeout) { [consumer] () throws -> UInt32 in
                consumer.called.withLock { $0[producer].append(seq) }
                if throwsError { throw BodyError(seq: seq) }
                return seq &* 2 &+ 1
            }
            outcome = value == seq &* 2 &+ 1 ? .returned : .other("wrong value \(value)")
        } catch let error as BodyError {
            outcome = error.seq == seq ? .rethrew : .other("wrong error \(error)")
        } catch PortRunLoopError.loopShutDown {
            outcome = .shutDown
            if !consumer.retiring.load(ordering: .sequentiallyConsistent) {
                log.shutDownWhileAlive.append("performAndWait seq \(seq) to c\(consumer.id) failed with loopShutDown although the consumer was not retiring")
            }
        } catch PortRunLoopError.timedOut {
            outcome = timeout == nil ? .other("timedOut without a timeout") : .timedOut
        } catch {
            outcome = .other("unexpected error \(error)")
        }
        log.calls[consumer.id, default: []].append((seq, outcome))
    }

    /// A block on one consumer that makes a synchronous call to another (loop threads waiting on
    /// each other must not deadlock). Body ran ⇔ the call returned.
    mutating func relay() {
        let from = round.pickConsumer(rng: &rng)
        let to = round.pickConsumer(rng: &rng)
        let round = self.round
        note("relay c\(from.id) → c\(to.id)")
        from.loop.perform { [to] in
            do {
                try to.loop.performAndWait { _ = to.relayBodies.add(1, ordering: .relaxed) }
                round.relaySucceeded.add(1, ordering: .relaxed)
            } catch {
                round.relayFailed.add(1, ordering: .relaxed)
            }
        }
        log.relays += 1
    }
}
