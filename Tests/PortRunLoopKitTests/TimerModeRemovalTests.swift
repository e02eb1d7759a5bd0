import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// contains(_:inMode:) and remove(_:forMode:) for RunLoopTimer (CFRunLoopContainsTimer,
/// CFRunLoopRemoveTimer): a timer leaves one mode and keeps firing in its others.
@Suite(.timeLimit(.minutes(1))) struct TimerModeRemovalTests {
    private static let other = RunLoop.Mode("TimerModeRemovalTests.other")

    @Test func aTimerRemovedFromOneModeFiresOnlyInItsOthers() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let fired = Recorder<Bool>()
            let timer = RunLoopTimer(fireAt: .distantPast) { _ in fired.append(true) }
            loop.add(timer, forMode: .default)
            loop.add(timer, forMode: Self.other)
            #expect(loop.contains(timer, inMode: .default) && loop.contains(timer, inMode: Self.other))
            loop.remove(timer, forMode: .default)
            #expect(!loop.contains(timer, inMode: .default) && loop.contains(timer, inMode: Self.other))
            #expect(timer.isValid)
            #expect(loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: false) == .finished)
            #expect(fired.count == 0)
            loop.run(mode: Self.other, timeout: 0, returnAfterSourceHandled: false)
            #expect(fired.count == 1)
            #expect(!loop.contains(timer, inMode: Self.other), "a fired one-shot timer is in no mode")
        }
    }

    @Test func aTimerRemovedFromEveryModeStaysValidAndCanBeAddedAgain() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let fired = Recorder<Bool>()
            let timer = RunLoopTimer(fireAt: .distantPast) { _ in fired.append(true) }
            loop.add(timer, forMode: .common)
            #expect(loop.contains(timer, inMode: .default), "through the common modes")
            loop.remove(timer, forMode: .common)
            #expect(!loop.contains(timer, inMode: .common))
            #expect(loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: false) == .finished)
            #expect(fired.count == 0 && timer.isValid)
            loop.add(timer, forMode: .default)
            loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: false)
            #expect(fired.count == 1)
        }
    }

    @Test func aRemovalFromAnotherThreadTakesEffectBeforeTheNextTurn() throws {
        let thread = try RunLoopThread(name: "timer-removal")
        defer { thread.stop() }
        let fired = Recorder<Bool>()
        let timer = RunLoopTimer(fireAt: Date().addingTimeInterval(0.2)) { _ in fired.append(true) }
        thread.loop.add(timer, forMode: .default)
        #expect(thread.loop.contains(timer, inMode: .default))
        thread.loop.remove(timer, forMode: .default)
        #expect(!thread.loop.contains(timer, inMode: .default))
        // Another timer, later than the removed one's date, shows the loop went past that date.
        let later = Signal()
        thread.loop.add(RunLoopTimer(fireAt: Date().addingTimeInterval(0.3)) { _ in later.fire() }, forMode: .default)
        #expect(later.wait())
        #expect(fired.count == 0)
    }

    @Test func removingFromAModeItIsNotInChangesNothing() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let timer = RunLoopTimer(fireAt: .distantFuture) { _ in }
            loop.remove(timer, forMode: .default)
            loop.add(timer, forMode: .default)
            loop.remove(timer, forMode: Self.other)
            #expect(loop.contains(timer, inMode: .default))
            timer.invalidate()
            #expect(!loop.contains(timer, inMode: .default))
        }
    }
}
