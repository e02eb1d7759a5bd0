import Foundation
@testable import PortRunLoopKit
import Testing

/// A timer's place in its loop (its group, its heap index), which the loop keeps on the timer
/// itself: set while the timer is registered, let go when it leaves, so that neither the timer nor
/// the loop's groups keep the other alive.
@Suite(.timeLimit(.minutes(1))) struct TimerBookkeepingTests {
    @Test func aRegisteredTimerHasAPlaceUntilItIsInvalidated() throws {
        let thread = try RunLoopThread(name: "timer.bookkeeping")
        defer { thread.stop() }
        let timer = RunLoopTimer(fireAt: .distantFuture) { _ in }
        thread.loop.add(timer, forMode: .default)
        // The loop's thread alone touches the bookkeeping: read it there.
        let inGroup = try thread.loop.performAndWait { timer.group != nil }
        let inHeap = try thread.loop.performAndWait { timer.heapIndex >= 0 }
        #expect(inGroup)
        #expect(inHeap)
        timer.invalidate()
        let leftGroup = try thread.loop.performAndWait { timer.group == nil }
        let leftHeap = try thread.loop.performAndWait { timer.heapIndex }
        #expect(leftGroup)
        #expect(leftHeap == -1)
    }

    @Test func aTimerAddedInASecondModeKeepsOnePlaceInOneHeap() throws {
        let thread = try RunLoopThread(name: "timer.bookkeeping.modes")
        defer { thread.stop() }
        let other = RunLoop.Mode("TimerBookkeepingTests.other")
        let timer = RunLoopTimer(fireAt: .distantFuture) { _ in }
        thread.loop.add(timer, forMode: .default)
        thread.loop.add(timer, forMode: other)
        let modes = try thread.loop.performAndWait { timer.group?.modes }
        #expect(modes == ModeSet([.default, other]))
        let inHeap = try thread.loop.performAndWait { timer.group?.timers.first === timer && timer.heapIndex == 0 }
        #expect(inHeap)
        timer.invalidate()
    }

    @Test func aShutDownLoopLetsGoOfItsTimers() throws {
        let thread = try RunLoopThread(name: "timer.bookkeeping.shutdown")
        let timer = RunLoopTimer(fireAt: .distantFuture) { _ in }
        thread.loop.add(timer, forMode: .default)
        try thread.loop.performAndWait {} // registered by now
        thread.stop() // joins the loop's thread: its writes are visible here
        #expect(!timer.isValid)
        #expect(timer.group == nil)
        #expect(timer.heapIndex == -1)
    }
}
