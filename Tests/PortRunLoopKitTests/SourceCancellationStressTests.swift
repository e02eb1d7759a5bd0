import Foundation
import PortRunLoopKit
import Synchronization
import Testing

/// Fd sources and timers cancelled from other threads while they are ready or firing, on loops
/// that keep running: once `cancel()` / `invalidate()` has returned, the handler never starts
/// again. Many rounds, bounded in count; no sleeps (a `performAndWait` round trip ends each round).
@Suite(.timeLimit(.minutes(2))) struct SourceCancellationStressTests {
    /// Counts handler starts; `runsWhenCancelled` is the count read right after `cancel()` /
    /// `invalidate()` returned. A handler call that had already started may still bump the count
    /// once after that read (it counts at its very start, which may come after the gate let it in);
    /// any further start is one the gate let in after the cancellation: a violation.
    private final class Marker: Sendable {
        let runs = Atomic<Int>(0)
        let runsWhenCancelled = Atomic<Int>(-1)
        func started() { runs.add(1, ordering: .relaxed) }
        func cancelled() { runsWhenCancelled.store(runs.load(ordering: .acquiring), ordering: .releasing) }
        var startedAfterCancel: Bool {
            let atCancel = runsWhenCancelled.load(ordering: .acquiring)
            return atCancel >= 0 && runs.load(ordering: .acquiring) > atCancel + 1
        }
    }

    /// Cancels each item from one of two threads at once, marking it right after the call
    /// returned, then lets every loop take a few more turns (nothing may start meanwhile).
    private func cancelFromTwoThreads<Item: Sendable>(_ pairs: [(Item, Marker)], then loops: [RunLoopThread],
                                                     _ cancel: @escaping @Sendable (Item) -> Void) throws {
        let group = DispatchGroup()
        let half = pairs.count / 2
        for part in [Array(pairs.prefix(half)), Array(pairs.dropFirst(half))] {
            DispatchQueue.global().async(group: group) {
                for (item, marker) in part {
                    cancel(item)
                    marker.cancelled()
                }
            }
        }
        group.wait()
        for loop in loops {
            for _ in 0..<3 { try loop.loop.performAndWait {} }
        }
    }

    @Test func readyFdSourcesCancelledFromOtherThreadsNeverRunAfterCancelReturns() throws {
        let loops = try (0..<2).map { try RunLoopThread(name: "cancel-fd-\($0)") }
        defer { for loop in loops { loop.stop() } }
        var totalRuns = 0
        for round in 0..<40 {
            // Pipes left readable (never read): level-triggered, every turn reports them ready.
            let pipes = (0..<16).map { _ in Pipe2() }
            for pipe in pipes { pipe.write(1) }
            var pairs: [(FileDescriptorSource, Marker)] = []
            for (index, pipe) in pipes.enumerated() {
                let marker = Marker()
                let loop = loops[(index + round) % loops.count].loop
                let source = try loop.watch(fileDescriptor: pipe.readEnd, for: .read) { _ in marker.started() }
                pairs.append((source, marker))
            }
            // Let them fire at least once, then cancel from two threads at once while ready.
            for loop in loops { try loop.loop.performAndWait {} }
            try cancelFromTwoThreads(pairs, then: loops) { $0.cancel() }
            for (_, marker) in pairs {
                #expect(!marker.startedAfterCancel, "round \(round): a handler started after cancel() returned")
                totalRuns += marker.runs.load(ordering: .relaxed)
            }
            withExtendedLifetime(pipes) {}
        }
        #expect(totalRuns >= 40 * 16) // every source fired before its cancel
    }

    @Test func firingTimersInvalidatedFromOtherThreadsNeverFireAfterInvalidateReturns() throws {
        let loops = try (0..<2).map { try RunLoopThread(name: "cancel-timer-\($0)") }
        defer { for loop in loops { loop.stop() } }
        var totalRuns = 0
        for round in 0..<40 {
            var pairs: [(RunLoopTimer, Marker)] = []
            for index in 0..<16 {
                let marker = Marker()
                let timer = RunLoopTimer(fireAt: Date(), interval: 0.0001, repeats: true) { _ in marker.started() }
                loops[(index + round) % loops.count].loop.add(timer, forMode: .common)
                pairs.append((timer, marker))
            }
            // Two barriers: the first block runs once the timers are added, the second a turn after
            // the one that fired them (they are due at once), so each has fired before its invalidate.
            for loop in loops { try loop.loop.performAndWait {} }
            for loop in loops { try loop.loop.performAndWait {} }
            try cancelFromTwoThreads(pairs, then: loops) { $0.invalidate() }
            for (timer, marker) in pairs {
                #expect(!timer.isValid)
                #expect(!marker.startedAfterCancel, "round \(round): a timer fired after invalidate() returned")
                totalRuns += marker.runs.load(ordering: .relaxed)
            }
        }
        #expect(totalRuns >= 40 * 16) // every timer fired before its invalidate
    }
}
