import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// limitDate(forMode:), acceptInput(forMode:before:) and nextTimerFireDate(forMode:): one pass
/// without waiting, then the mode's next timer date (swift-corelibs-foundation's reading of
/// `-[NSRunLoop limitDateForMode:]`).
@Suite(.timeLimit(.minutes(1))) struct LimitDateTests {
    private static let other = RunLoop.Mode("LimitDateTests.other")

    @Test func anEmptyModeHasNoLimitDate() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            #expect(loop.limitDate(forMode: .default) == nil)
            #expect(loop.nextTimerFireDate(forMode: .default) == nil)
        }
    }

    @Test func aModeWithoutTimersIsLimitedByTheDistantFuture() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let source = RunLoopSource { _ in }
            loop.add(source, forMode: .default)
            #expect(loop.limitDate(forMode: .default) == .distantFuture)
            #expect(loop.nextTimerFireDate(forMode: .default) == nil)
        }
    }

    @Test func theLimitIsTheEarliestTimerOfTheModeAfterOnePassThatDoesNotWait() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let fired = Recorder<String>()
            let later = Date().addingTimeInterval(3600), latest = Date().addingTimeInterval(7200)
            loop.add(RunLoopTimer(fireAt: latest) { _ in fired.append("latest") }, forMode: .default)
            loop.add(RunLoopTimer(fireAt: later) { _ in fired.append("later") }, forMode: .default)
            loop.add(RunLoopTimer(fireAt: Date().addingTimeInterval(60)) { _ in fired.append("other") }, forMode: Self.other)
            loop.add(RunLoopTimer(fireAt: .distantPast) { _ in fired.append("due") }, forMode: .default)
            let queued = Recorder<Bool>()
            loop.perform { queued.append(true) }
            let started = Date()
            #expect(loop.limitDate(forMode: .default) == later)
            #expect(Date().timeIntervalSince(started) < 1, "the pass waited")
            #expect(fired.values == ["due"])
            #expect(queued.count == 1)
            #expect(loop.nextTimerFireDate(forMode: .default) == later)
            #expect(loop.nextTimerFireDate(forMode: Self.other)! < later)
        }
    }

    @Test func aPassThatEmptiesTheModeHasNoLimitDate() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let fired = Recorder<Bool>()
            loop.add(RunLoopTimer(fireAt: .distantPast) { _ in fired.append(true) }, forMode: .default)
            #expect(loop.limitDate(forMode: .default) == nil)
            #expect(fired.count == 1)
        }
    }

    @Test func acceptInputReturnsAfterAHandledSourceOrAtTheDate() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let performed = Recorder<Bool>()
            let source = RunLoopSource { _ in performed.append(true) }
            loop.add(source, forMode: .default)
            let thread = Thread {
                source.signal()
                loop.wakeUp()
            }
            thread.start()
            loop.acceptInput(forMode: .default, before: .distantFuture)
            #expect(performed.count == 1)
            let start = Date()
            loop.acceptInput(forMode: .default, before: start.addingTimeInterval(0.05))
            #expect(Date().timeIntervalSince(start) >= 0.05)
            #expect(performed.count == 1)
            // An empty mode returns at once.
            loop.acceptInput(forMode: Self.other, before: .distantFuture)
        }
    }
}
