import Foundation
import PortRunLoopKit
import PortRunLoopStressEngine
import Testing

/// The randomized model test: random operation sequences, driven single-threaded by
/// the thread that owns the loop, checked against a reference model of
/// Sources/PortRunLoopKit/PortRunLoopKit.docc/Semantics.md (see `ModelHarness`). On failure the seed and the shortest failing sequence found are printed;
/// `PORTRUNLOOP_MODEL_SEED=<seed>` replays exactly that case, `PORTRUNLOOP_MODEL_CASES` sets the
/// number of cases (default 400; `portrunloop-stress --model --cases N` runs more).
@Suite(.timeLimit(.minutes(2))) struct ModelTests {
    @Test func randomSequencesAgreeWithTheModel() async {
        let environment = ProcessInfo.processInfo.environment
        let failure: ModelChecker.Failure?
        if let text = environment["PORTRUNLOOP_MODEL_SEED"], let seed = StressConfiguration.parseSeed(text) {
            print("ModelTests: replaying case seed \(seed)")
            failure = await offThePool { ModelChecker.run(seed: seed) }
        } else {
            let base = UInt64.random(in: 1...UInt64.max)
            let cases = environment["PORTRUNLOOP_MODEL_CASES"].flatMap(Int.init) ?? 400
            print("ModelTests: \(cases) cases from base seed \(base)")
            failure = await offThePool { ModelChecker.run(cases: cases, baseSeed: base) }
        }
        if let failure {
            print(failure)
            Issue.record(Comment(rawValue: failure.description))
        }
    }

    @Test func theSameSeedGivesTheSameSequence() {
        for seed: UInt64 in [1, 42, 0xDEAD_BEEF] {
            #expect(ModelChecker.generate(seed: seed).map(\.description) == ModelChecker.generate(seed: seed).map(\.description))
        }
        #expect(ModelChecker.generate(seed: 1).map(\.description) != ModelChecker.generate(seed: 2).map(\.description))
    }

    @Test func aPassingSequenceStaysPassing() {
        // Four zero-timeout sends to an unscheduled port with a limit of at most 3: the model
        // predicts the rejections exactly, and the held messages are delivered in the drain.
        let result = ModelChecker.check([.send(port: 0), .send(port: 0), .send(port: 0), .send(port: 0)], seed: 7)
        #expect(result.passed, "\(result.violations)")
    }

    @Test func theShrinkerFindsTheShortestFailingSequence() {
        // A synthetic failure: a stop() followed (anywhere later) by a send to p1.
        func fails(_ ops: [ModelOp]) -> Bool {
            guard let stop = ops.firstIndex(where: { if case .stop = $0 { true } else { false } }) else { return false }
            return ops[stop...].contains { if case .send(1) = $0 { true } else { false } }
        }
        let noisy: [ModelOp] = [.send(port: 0), .perform(modes: [.common], actions: [.stop]), .addPort(port: 2, mode: .a),
                                .stop, .run(mode: .default, kind: .beforePast), .send(port: 2), .send(port: 1), .writePipe]
        #expect(fails(noisy))
        let (shrunk, attempts) = ModelChecker.shrink(noisy, maxAttempts: 500, stillFails: fails)
        #expect(shrunk.map(\.description) == ["stop()", "send(p1)"])
        #expect(attempts > 0)
    }
}
