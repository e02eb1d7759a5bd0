import Foundation
@testable import PortRunLoopKit
import Synchronization
import Testing

/// TracedMutex as a condition: `wait(untilMonotonic:until:)` returns once a broadcast follows a
/// change that makes its predicate hold, and returns false at its deadline when none does.
@Suite(.timeLimit(.minutes(1))) struct TracedMutexWaitTests {
    @Test func waitReturnsOnceABroadcastFollowsTheChange() {
        let value = TracedMutex(0)
        let finished = DispatchSemaphore(value: 0)
        // Several waiters, each for a different value: every broadcast wakes them all to re-check.
        for wanted in 1...4 {
            Thread.detachNewThread {
                let held = value.wait(untilMonotonic: System.monotonicSeconds() + 30) { $0 >= wanted }
                if held { finished.signal() }
            }
        }
        for _ in 1...4 {
            value.withLock { $0 += 1 }
            value.broadcast()
        }
        for _ in 1...4 { #expect(finished.wait(timeout: .now() + 30) == .success) }
    }

    @Test func waitTimesOutWhenThePredicateNeverHolds() {
        let value = TracedMutex(false)
        let start = System.monotonicSeconds()
        let held = value.wait(untilMonotonic: start + 0.05) { $0 }
        #expect(!held)
        #expect(System.monotonicSeconds() - start >= 0.05)
    }

    @Test func waitSeesAChangeMadeWithoutWaitingForAWakeUp() {
        let value = TracedMutex(true)
        #expect(value.wait(untilMonotonic: System.monotonicSeconds()) { $0 })
    }

    @Test func noWakeUpIsLostUnderManyRounds() throws {
        // Ping-pong: each side waits for the other's turn. A lost wake-up leaves a round waiting
        // until the deadline, which each side reports.
        let turn = TracedMutex(0)
        let rounds = 20_000
        let deadline = System.monotonicSeconds() + 30
        let done = DispatchSemaphore(value: 0)
        let otherSideTimedOut = Atomic<Bool>(false)
        Thread.detachNewThread {
            for round in 0..<rounds {
                guard turn.wait(untilMonotonic: deadline, until: { $0 == 2 * round + 1 }) else {
                    otherSideTimedOut.store(true, ordering: .relaxed)
                    break
                }
                turn.withLock { $0 += 1 }
                turn.broadcast()
            }
            done.signal()
        }
        for round in 0..<rounds {
            turn.withLock { $0 += 1 }
            turn.broadcast()
            try #require(turn.wait(untilMonotonic: deadline) { $0 == 2 * round + 2 }, "round \(round) waited past the deadline")
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        let otherSideGaveUp = otherSideTimedOut.load(ordering: .relaxed)
        #expect(!otherSideGaveUp)
        #expect(turn.withLock { $0 } == 2 * rounds)
    }
}
