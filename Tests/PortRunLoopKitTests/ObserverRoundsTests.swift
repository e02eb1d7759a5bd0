import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// `LoopMetrics.observerRounds`: a loop without observers makes no round of observer calls
/// (Semantics.md O7), and with observers each activity a run reports is one round (O3, O5).
@Suite(.timeLimit(.minutes(1))) struct ObserverRoundsTests {
    private static let other = RunLoop.Mode("ObserverRoundsTests.other")

    /// `turns` polling runs, each handling one block: the Foundation idiom's turn.
    private static func pollingTurns(_ loop: PortRunLoop, _ turns: Int) {
        for _ in 0..<turns {
            loop.perform {}
            #expect(loop.run(mode: .default, before: .distantPast))
        }
    }

    @Test func aLoopWithoutObserversMakesNoRounds() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            loop.add(MessagePort(), forMode: .default)
            let before = loop.metrics
            Self.pollingTurns(loop, 100)
            #expect(loop.run(mode: .default, timeout: 0.01, returnAfterSourceHandled: false) == .timedOut) // sleeps
            let spent = loop.metrics.since(before)
            #expect(spent.performsRun == 100 && spent.sleeps > 0)
            #expect(spent.observerRounds == 0)
        }
    }

    @Test func eachActivityOfARunIsOneRoundWhateverTheNumberOfObservers() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            loop.add(MessagePort(), forMode: .default)
            let calls = Locked(0)
            let observers = (0..<10).map { order in
                RunLoopObserver(activities: .allActivities, order: order) { _, _ in calls.withLock { $0 += 1 } }
            }
            for observer in observers { loop.add(observer, forMode: .default) }
            let before = loop.metrics
            Self.pollingTurns(loop, 100)
            // A polling run that handles a block: entry, before timers, before sources, exit.
            #expect(loop.metrics.since(before).observerRounds == 400)
            #expect(calls.withLock { $0 } == 4_000)
            for observer in observers { observer.invalidate() }
            let after = loop.metrics
            Self.pollingTurns(loop, 10)
            #expect(loop.metrics.since(after).observerRounds == 0)
        }
    }

    @Test func roundsAreCountedAlsoWhenNoObserverOfTheModeWatches() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            loop.add(MessagePort(), forMode: .default)
            let observer = RunLoopObserver(activities: .allActivities) { _, _ in Issue.record("called in a mode it is not in") }
            loop.add(observer, forMode: Self.other)
            defer { observer.invalidate() }
            let before = loop.metrics
            Self.pollingTurns(loop, 10)
            // The loop has an observer, so each run goes through its mode's (empty) list.
            #expect(loop.metrics.since(before).observerRounds == 40)
        }
    }
}
