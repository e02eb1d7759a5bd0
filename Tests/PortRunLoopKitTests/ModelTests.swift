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

    @Test func observersAndSourcesAgreeWithTheModelAcrossNestedRuns() {
        // A one-shot observer of entry, a repeating one of every activity in the common modes and a
        // lower-order one in A; two sources of equal order signalled in both orders, one in A. A
        // block's nested run of A reports its own rounds between the outer run's beforeSources and
        // exit, performs the source of A there and not the others; a run that returns after a
        // handled source performs only the first of two signalled sources.
        let ops: [ModelOp] = [
            .addObserver(activities: .entry, repeats: false, order: 0, mode: .default),
            .addObserver(activities: .allActivities, repeats: true, order: 1, mode: .common),
            .addObserver(activities: .allActivities, repeats: true, order: -1, mode: .a),
            .addSource(source: 1, mode: .default), .addSource(source: 2, mode: .common), .addSource(source: 0, mode: .a),
            .signalSource(source: 2), .signalSource(source: 1), .signalSource(source: 0),
            .perform(modes: [.default], actions: [.run(mode: .a, kind: .poll(returnAfterSourceHandled: false)), .signalSource(source: 2)]),
            .run(mode: .default, kind: .poll(returnAfterSourceHandled: false)),
            .signalSource(source: 1), .signalSource(source: 2), .run(mode: .default, kind: .beforePast),
            .invalidateObserver(index: 1), .removeSource(source: 2, mode: .common), .signalSource(source: 2),
            .run(mode: .default, kind: .poll(returnAfterSourceHandled: false)),
        ]
        let result = ModelChecker.check(ops, seed: 3)
        #expect(result.passed, "\(result.violations)\n\(result.trace.joined(separator: "\n"))")
        #expect(result.trace.contains { $0.contains("→ observer o2 E") } && result.trace.contains { $0.contains("→ s0 performed") })
    }

    @Test func theGeneratorMakesObserverAndSourceOperations() {
        // The random cases cover the callouts: observers added (some one-shot, some of a few
        // activities), moved and taken away, sources added, signalled (also from handlers),
        // removed and invalidated.
        func nested(_ op: ModelOp) -> [ModelOp] {
            switch op {
            case .onNextDelivery(_, let a), .perform(_, let a), .addTimer(_, _, let a): a
            default: []
            }
        }
        let ops = (0..<400).flatMap { ModelChecker.generate(seed: ModelChecker.caseSeed(base: 1, index: $0)) }
        let inHandlers = ops.flatMap(nested)
        let all = ops + inHandlers
        func count(_ match: (ModelOp) -> Bool) -> Int { all.filter(match).count }
        #expect(count { if case .addObserver(_, false, _, _) = $0 { true } else { false } } > 20)
        #expect(count { if case .addObserver(let a, _, _, _) = $0 { a != .allActivities } else { false } } > 20)
        #expect(count { if case .observeMode = $0 { true } else { false } } > 0)
        #expect(count { if case .removeObserver = $0 { true } else { false } } > 0)
        #expect(count { if case .invalidateObserver = $0 { true } else { false } } > 0)
        #expect(count { if case .signalSource = $0 { true } else { false } } > 400)
        #expect(inHandlers.contains { if case .signalSource = $0 { true } else { false } })
        #expect(count { if case .removeSource = $0 { true } else { false } } > 0)
        #expect(count { if case .invalidateSource = $0 { true } else { false } } > 0)
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
