import Foundation
@testable import PortRunLoopKit
import Synchronization
import Testing

/// StateChangeWait, the one blocking wait for shared state (a port's room, a gate's handlers, a
/// connection's reader): the state lists a wait per waiter and completes them all when it changes;
/// each waiter looks again and, if it must go on waiting, lists a new one. No change is missed
/// between a waiter's look and its sleep, and the deadline ends a wait whose state never changes.
@Suite(.timeLimit(.minutes(1))) struct StateChangeWaitTests {
    /// A value and the waits for its change, behind one lock: the pattern the library's waits use.
    final class Watched: Sendable {
        private let state: TracedMutex<(value: Int, waits: StateChangeWaits)>

        init(_ value: Int) { state = TracedMutex((value, StateChangeWaits())) }

        func change(_ body: (inout Int) -> Void) {
            state.withLock { state in
                body(&state.value)
                state.waits.completeAll()
            }
        }

        /// Waits until `ready` holds for the value or the monotonic `deadline` passes.
        func wait(until deadline: Double, for ready: (Int) -> Bool) -> Bool {
            while true {
                let wait = StateChangeWait(waiter: PortRunLoop.existingForCurrentThread())
                let holds = state.withLock { state -> Bool in
                    if ready(state.value) { return true }
                    state.waits.add(wait)
                    return false
                }
                if holds { return true }
                wait.waitUntilComplete(deadline: deadline)
                if System.monotonicSeconds() >= deadline {
                    return state.withLock { state in
                        state.waits.remove(wait)
                        return ready(state.value)
                    }
                }
            }
        }
    }

    @Test func everyWaiterReturnsOnceAChangeMakesItsConditionHold() {
        let value = Watched(0)
        let finished = DispatchSemaphore(value: 0)
        // Several waiters, each for a different value: every change completes them all to re-check.
        for wanted in 1...4 {
            Thread.detachNewThread {
                if value.wait(until: System.monotonicSeconds() + 30, for: { $0 >= wanted }) { finished.signal() }
            }
        }
        for _ in 1...4 { value.change { $0 += 1 } }
        for _ in 1...4 { #expect(finished.wait(timeout: .now() + 30) == .success) }
    }

    @Test func theDeadlineEndsAWaitWhoseStateNeverChanges() {
        let value = Watched(0)
        let start = System.monotonicSeconds()
        #expect(!value.wait(until: start + 0.05) { $0 == 1 })
        #expect(System.monotonicSeconds() - start >= 0.05)
    }

    @Test func aConditionThatHoldsAlreadyEndsTheWaitAtOnce() {
        let value = Watched(1)
        #expect(value.wait(until: System.monotonicSeconds()) { $0 == 1 })
    }

    @Test func noChangeIsMissedUnderManyRounds() throws {
        // Ping-pong: each side waits for the other's turn. A missed change leaves a round waiting
        // until the deadline, which each side reports.
        let turn = Watched(0)
        let rounds = 20_000
        let deadline = System.monotonicSeconds() + 30
        let done = DispatchSemaphore(value: 0)
        let otherSideTimedOut = Atomic<Bool>(false)
        Thread.detachNewThread {
            for round in 0..<rounds {
                guard turn.wait(until: deadline, for: { $0 == 2 * round + 1 }) else {
                    otherSideTimedOut.store(true, ordering: .relaxed)
                    break
                }
                turn.change { $0 += 1 }
            }
            done.signal()
        }
        var timedOut = false
        for round in 0..<rounds {
            turn.change { $0 += 1 }
            guard turn.wait(until: deadline, for: { $0 == 2 * round + 2 }) else {
                timedOut = true
                break
            }
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(!timedOut)
        let otherSideGaveUp = otherSideTimedOut.load(ordering: .relaxed)
        #expect(!otherSideGaveUp)
    }

    @Test func aLoopThreadServesSynchronousCallsWhileItWaitsForAChange() throws {
        // The change is made by a thread that first needs a performAndWait on the waiter's loop.
        let waiter = try RunLoopThread(name: "scw-waiter")
        let changer = try RunLoopThread(name: "scw-changer")
        defer { waiter.stop(); changer.stop() }
        let value = Watched(0)
        let held = try waiter.loop.performAndWait { () -> Bool in
            changer.loop.perform {
                let served = (try? waiter.loop.performAndWait { 1 }) ?? 0
                value.change { $0 += served }
            }
            return value.wait(until: System.monotonicSeconds() + 20) { $0 == 1 }
        }
        #expect(held)
    }
}
