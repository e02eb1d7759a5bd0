import Foundation
import PortRunLoopKit

/// The randomized model test: random operation sequences, driven single-threaded on a
/// loop by the thread that owns it, checked against a reference model of
/// Sources/PortRunLoopKit/PortRunLoopKit.docc/Semantics.md. A failing case is shrunk to the
/// shortest failing sequence found; its seed replays it.
///
/// Thread-safety: `Sendable`; each case runs on a brand-new thread with a brand-new loop.
public enum ModelChecker {
    /// The outcome of one case.
    ///
    /// Thread-safety: a value type; `Sendable`.
    public struct CaseResult: Sendable {
        /// The case's seed (`PORTRUNLOOP_MODEL_SEED` replays it).
        /// Thread-safety: immutable.
        public let seed: UInt64
        /// The operations that ran.
        /// Thread-safety: immutable.
        public let ops: [ModelOp]
        /// Broken guarantees (empty: the case passed).
        /// Thread-safety: immutable.
        public let violations: [String]
        /// What happened, operation by operation, with the loop's callbacks interleaved.
        /// Thread-safety: immutable.
        public let trace: [String]
        /// Thread-safety: a value type.
        public var passed: Bool { violations.isEmpty }
    }

    /// A failure, shrunk.
    ///
    /// Thread-safety: a value type; `Sendable`.
    public struct Failure: Sendable, CustomStringConvertible {
        /// The failing case as generated, and as shrunk.
        /// Thread-safety: immutable.
        public let original: CaseResult, shrunk: CaseResult
        /// Candidate sequences tried while shrinking.
        /// Thread-safety: immutable.
        public let shrinkAttempts: Int

        /// Seed, shortest failing sequence, its violations and trace.
        ///
        /// Thread-safety: a value type.
        public var description: String {
            var lines = ["model test FAILED — seed \(original.seed) (replay: PORTRUNLOOP_MODEL_SEED=\(original.seed))",
                         "original: \(original.ops.count) ops, \(original.violations.count) violation(s); first: \(original.violations.first ?? "")",
                         "shortest failing sequence found (\(shrunk.ops.reduce(0) { $0 + $1.size }) ops, after \(shrinkAttempts) attempts):"]
            lines += shrunk.ops.enumerated().map { "  \($0.offset + 1). \($0.element)" }
            lines.append("violations:")
            lines += shrunk.violations.map { "  - \($0)" }
            lines.append("trace:")
            lines += shrunk.trace.map { "  \($0)" }
            return lines.joined(separator: "\n")
        }
    }

    /// The operation sequence of `seed`.
    ///
    /// Thread-safety: a pure function.
    public static func generate(seed: UInt64) -> [ModelOp] { ModelGenerator.generate(seed: seed) }

    /// The seed of case `index` of a run whose base seed is `base`.
    ///
    /// Thread-safety: a pure function.
    public static func caseSeed(base: UInt64, index: Int) -> UInt64 { SeededGenerator.derive(base, UInt64(index)) }

    /// Runs `ops` on a new thread with a new loop and checks them.
    ///
    /// Thread-safety: any thread.
    public static func check(_ ops: [ModelOp], seed: UInt64) -> CaseResult {
        var limitRNG = SeededGenerator(seed: seed ^ 0x5EED)
        let limits = (0..<ModelGenerator.portCount).map { _ in Int.random(in: 1...3, using: &limitRNG) }
        let outcome = try? JoinableThread.run(name: "model-case") { () -> ([String], [String]) in
            let harness = ModelHarness(loop: PortRunLoop.current, limits: limits)
            harness.execute(ops)
            harness.finish()
            return (harness.violations, harness.trace)
        }
        let (violations, trace) = outcome ?? (["the case did not complete"], [])
        return CaseResult(seed: seed, ops: ops, violations: violations, trace: trace)
    }

    /// Generates and checks the case of `seed`; on failure, shrinks it.
    ///
    /// Thread-safety: any thread.
    public static func run(seed: UInt64, maxShrinkAttempts: Int = 3_000) -> Failure? {
        let result = check(generate(seed: seed), seed: seed)
        guard !result.passed else { return nil }
        let (shrunk, attempts) = shrink(result, maxAttempts: maxShrinkAttempts)
        return Failure(original: result, shrunk: shrunk, shrinkAttempts: attempts)
    }

    /// Runs `cases` cases derived from `baseSeed`; returns the first failure, shrunk, if any.
    ///
    /// Thread-safety: any thread.
    public static func run(cases: Int, baseSeed: UInt64, maxShrinkAttempts: Int = 3_000) -> Failure? {
        for index in 0..<cases {
            if let failure = run(seed: caseSeed(base: baseSeed, index: index), maxShrinkAttempts: maxShrinkAttempts) {
                return failure
            }
        }
        return nil
    }

    /// Greedy delta debugging on a failing case: see ``shrink(_:maxAttempts:stillFails:)``.
    static func shrink(_ failing: CaseResult, maxAttempts: Int) -> (CaseResult, Int) {
        var best = failing
        let (_, attempts) = shrink(failing.ops, maxAttempts: maxAttempts) { ops in
            let result = check(ops, seed: failing.seed)
            if !result.passed { best = result }
            return !result.passed
        }
        return (best, attempts)
    }

    /// Greedy delta debugging: drops chunks of top-level operations (halving the chunk size down to
    /// one), then nested actions, keeping every smaller candidate for which `stillFails` holds,
    /// until nothing shrinks or `maxAttempts` candidates were tried. Returns the smallest failing
    /// sequence found and the number of candidates tried.
    ///
    /// Thread-safety: runs `stillFails` on the calling thread.
    public static func shrink(_ ops: [ModelOp], maxAttempts: Int,
                              stillFails: ([ModelOp]) -> Bool) -> ([ModelOp], Int) {
        var best = ops
        var attempts = 0
        func size(_ ops: [ModelOp]) -> Int { ops.reduce(0) { $0 + $1.size } }
        func tryCandidate(_ candidate: [ModelOp]) -> Bool {
            guard attempts < maxAttempts, size(candidate) < size(best) else { return false }
            attempts += 1
            if stillFails(candidate) { best = candidate; return true }
            return false
        }
        var progress = true
        while progress && attempts < maxAttempts {
            progress = false
            var chunk = max(best.count / 2, 1)
            while chunk >= 1 {
                var start = 0
                while start < best.count {
                    var candidate = best
                    candidate.removeSubrange(start..<min(start + chunk, candidate.count))
                    if tryCandidate(candidate) { progress = true } else { start += chunk }
                }
                chunk /= 2
            }
            // Nested actions: drop them all at once, else one at a time.
            var index = 0
            while index < best.count {
                let op = best[index]
                if !op.actions.isEmpty {
                    var candidate = best
                    candidate[index] = op.withActions([])
                    if tryCandidate(candidate) {
                        progress = true
                    } else {
                        var a = 0
                        while a < best[index].actions.count {
                            var actions = best[index].actions
                            actions.remove(at: a)
                            var c = best
                            c[index] = best[index].withActions(actions)
                            if tryCandidate(c) { progress = true } else { a += 1 }
                        }
                    }
                }
                index += 1
            }
        }
        return (best, attempts)
    }
}
