import Foundation

/// A producer's fd and timer operations: after each of its regular operations, a producer rolls
/// its *second* generator (so the regular operations a seed chooses are the same with or without
/// fds and timers) and may write records into a pipe, add a one-shot or repeating timer, re-arm a
/// one-shot from this thread (now and then inside the turn that fires it), or (with chaos)
/// invalidate one. Then it reports its progress, which paces the source chaos thread.
extension StressProducer {
    mutating func sourceOperation(step: Int) {
        let fds = round.fileDescriptors, timers = round.timers
        if fds == nil && timers == nil {
            if round.callouts != nil { round.sourceOpsDone.update { $0 += 1 } }
            return
        }
        let roll = Int.random(in: 0..<1000, using: &sourceRNG)
        switch roll {
        case 0..<250 where fds != nil:
            note("op \(step): fd write")
            fds!.producerWrite(producer: index, seq: &pipeSeq, rng: &sourceRNG, round: round)
        case 250..<300 where timers != nil:
            note("op \(step): adding a one-shot timer")
            timers!.addOneShot(rng: &sourceRNG, round: round)
        case 300..<312 where timers != nil:
            note("op \(step): adding a repeating timer")
            timers!.addRepeating(rng: &sourceRNG, round: round)
        case 312..<337 where timers != nil:
            note("op \(step): re-arming a one-shot timer")
            timers!.rearmFromOtherThread(rng: &sourceRNG)
        case 337..<347 where timers != nil && round.config.chaos:
            note("op \(step): invalidating a one-shot timer")
            timers!.invalidateOneShot(rng: &sourceRNG)
        case 347..<352 where timers != nil:
            note("op \(step): re-arming a one-shot inside the turn that fires it")
            timers!.rearmRacingFire(rng: &sourceRNG, round: round)
        default:
            break
        }
        round.sourceOpsDone.update { $0 += 1 }
    }
}
