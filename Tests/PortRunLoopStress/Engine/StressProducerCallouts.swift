import Foundation

/// A producer's observer and custom-source operations: after each of its regular operations, a
/// producer rolls its *third* generator (so the regular, fd and timer operations a seed chooses are
/// the same with or without observers and sources) and may signal a custom source (1–3 times, then
/// most of the time a wake-up), add an observer (most of them one-shot), or (with chaos) invalidate
/// one. The source chaos thread is paced by ``sourceOperation(step:)``, which follows.
extension StressProducer {
    mutating func calloutOperation(step: Int) {
        guard let callouts = round.callouts else { return }
        switch Int.random(in: 0..<1000, using: &calloutRNG) {
        case 0..<120:
            note("op \(step): signalling a custom source")
            callouts.producerSignal(rng: &calloutRNG, round: round)
        case 120..<128:
            note("op \(step): adding a run-loop observer")
            callouts.producerAddObserver(rng: &calloutRNG, round: round)
        case 128..<133 where round.config.chaos:
            note("op \(step): invalidating a run-loop observer")
            callouts.producerInvalidateObserver(rng: &calloutRNG)
        default:
            break
        }
    }
}
