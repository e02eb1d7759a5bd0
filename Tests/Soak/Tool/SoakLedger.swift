import Foundation
import PortRunLoopKit
import Synchronization

/// The soak's books: messages sent and delivered where delivery is promised, losses (promised
/// deliveries that did not happen), violations (a duplicate, a reordering, a wrong payload or
/// thread, a hang), drops the documentation allows (by kind), and restarts (by kind).
///
/// Thread-safety: `Sendable`; any thread.
final class SoakLedger: Sendable {
    private let sentCount = Atomic<Int>(0)
    private let deliveredCount = Atomic<Int>(0)
    private let lostCount = Atomic<Int>(0)
    private let violationCount = Atomic<Int>(0)
    private let tallies = TracedMutex<Tallies>(Tallies())
    /// When the run started, for the times in violation messages.
    let start = ContinuousClock.now

    private struct Tallies {
        var drops: [String: Int] = [:]
        var restarts: [String: Int] = [:]
        var notes: [String] = []
    }

    /// The figures at one moment.
    struct Snapshot {
        var sent: Int
        var delivered: Int
        var lost: Int
        var violations: Int
        var drops: [String: Int]
        var restarts: [String: Int]
    }

    func sent(_ count: Int = 1) { sentCount.add(count, ordering: .relaxed) }
    func delivered(_ count: Int = 1) { deliveredCount.add(count, ordering: .relaxed) }

    /// `count` promised deliveries did not happen: printed at once, with what was lost.
    func lost(_ count: Int, _ what: @autoclosure () -> String) {
        guard count > 0 else { return }
        lostCount.add(count, ordering: .relaxed)
        note("LOST \(count): \(what())")
    }

    /// Something that must never happen happened (printed at once).
    func violation(_ what: @autoclosure () -> String) {
        violationCount.add(1, ordering: .relaxed)
        note("VIOLATION: \(what())")
    }

    /// `count` deliveries that did not happen and that the documentation allows, of `kind`.
    func dropped(_ kind: String, _ count: Int = 1) {
        guard count > 0 else { return }
        tallies.withLock { $0.drops[kind, default: 0] += count }
    }

    /// Something was restarted or replaced on purpose: a daemon, the peer process, a thread, a pipe.
    func restarted(_ kind: String, _ count: Int = 1) {
        tallies.withLock { $0.restarts[kind, default: 0] += count }
    }

    /// Prints a line on standard error now, and keeps the first 100 for the summary.
    func note(_ line: String) {
        let elapsed = (ContinuousClock.now - start).seconds
        let stamped = String(format: "[%.1fs] ", elapsed) + line
        FileHandle.standardError.write(Data(("soak: " + stamped + "\n").utf8))
        tallies.withLock { if $0.notes.count < 100 { $0.notes.append(stamped) } }
    }

    var notes: [String] { tallies.withLock { $0.notes } }

    var snapshot: Snapshot {
        let (drops, restarts) = tallies.withLock { ($0.drops, $0.restarts) }
        return Snapshot(sent: sentCount.load(ordering: .relaxed), delivered: deliveredCount.load(ordering: .relaxed),
                        lost: lostCount.load(ordering: .relaxed), violations: violationCount.load(ordering: .relaxed),
                        drops: drops, restarts: restarts)
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }
}

/// A count shared between threads.
///
/// Thread-safety: `Sendable`; any thread.
final class SoakCounter: Sendable {
    private let count = Atomic<Int>(0)
    func add(_ amount: Int = 1) { count.add(amount, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
    /// The count, reset to 0.
    func take() -> Int { count.exchange(0, ordering: .relaxed) }
}

/// A value behind a lock, shared by reference (a mutex cannot be copied into closures; `TracedMutex`, which ThreadSanitizer sees).
///
/// Thread-safety: `Sendable`; any thread.
final class Shared<Value: Sendable>: Sendable {
    private let mutex: TracedMutex<Value>
    init(_ value: Value) { mutex = TracedMutex(value) }
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R { try mutex.withLock { try body(&$0) } }
}
