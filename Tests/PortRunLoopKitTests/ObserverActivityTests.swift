import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// RunLoopObserver: the activities a run reports, compared with the sequences CFRunLoop's
/// `CFRunLoopRunSpecific`/`__CFRunLoopRun` produce for the same runs.
@Suite(.timeLimit(.minutes(1))) struct ObserverActivityTests {
    private static let other = RunLoop.Mode("ObserverActivityTests.other")

    /// Records every activity of `loop`'s runs in `mode`.
    private static func recording(_ loop: PortRunLoop, in modes: [RunLoop.Mode],
                                  then react: (@Sendable (RunLoopActivity) -> Void)? = nil) -> Recorder<RunLoopActivity> {
        let seen = Recorder<RunLoopActivity>()
        let observer = RunLoopObserver(activities: .allActivities) { _, activity in
            seen.append(activity)
            react?(activity)
        }
        for mode in modes { loop.add(observer, forMode: mode) }
        return seen
    }

    /// Entry, one or more passes that each sleep (before timers, before sources, before waiting,
    /// after waiting), exit: what CF reports for a run that sleeps until its end.
    private static func isSleepingRun(_ seen: [RunLoopActivity]) -> Bool {
        guard seen.count >= 6, seen.first == .entry, seen.last == .exit else { return false }
        let passes = Array(seen.dropFirst().dropLast())
        guard passes.count % 4 == 0 else { return false }
        return stride(from: 0, to: passes.count, by: 4).allSatisfy {
            Array(passes[$0..<$0 + 4]) == [.beforeTimers, .beforeSources, .beforeWaiting, .afterWaiting]
        }
    }

    @Test func aRunThatTimesOutSleepsBetweenItsEntryAndExit() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            loop.add(MessagePort(), forMode: .default) // keeps the mode from being empty
            let seen = Self.recording(loop, in: [.default])
            #expect(loop.run(mode: .default, timeout: 0.05, returnAfterSourceHandled: false) == .timedOut)
            #expect(Self.isSleepingRun(seen.values), "\(seen.values)")
        }
    }

    @Test func aPollingRunNeverReportsWaiting() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            loop.add(MessagePort(), forMode: .default)
            let seen = Self.recording(loop, in: [.default])
            #expect(loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: false) == .timedOut)
            #expect(seen.values == [.entry, .beforeTimers, .beforeSources, .exit])
        }
    }

    @Test func aRunThatHandlesAMessageReportsTheWakeBeforeItsExit() throws {
        let port = MessagePort()
        let asleep = Signal()
        let sender = Thread {
            guard asleep.wait() else { return }
            port.send(before: .distantFuture)
        }
        sender.start()
        try onFreshThread {
            let loop = PortRunLoop.current
            loop.add(port, forMode: .default)
            let seen = Self.recording(loop, in: [.default]) { if $0 == .beforeWaiting { asleep.fire() } }
            #expect(loop.run(mode: .default, before: .distantFuture))
            // CF: entry, before timers, before sources, before waiting, (mach_msg) after waiting,
            // the port's message handled, exit.
            #expect(seen.values == [.entry, .beforeTimers, .beforeSources, .beforeWaiting, .afterWaiting, .exit])
        }
    }

    @Test func aRunStoppedFromAnotherThreadReportsItsWakeAndExit() throws {
        let loopBox = Locked<PortRunLoop?>(nil)
        let asleep = Signal()
        let stopper = Thread {
            guard asleep.wait() else { return }
            loopBox.withLock { $0 }?.stop()
        }
        stopper.start()
        try onFreshThread {
            let loop = PortRunLoop.current
            loopBox.withLock { $0 = loop }
            loop.add(MessagePort(), forMode: .default)
            let seen = Self.recording(loop, in: [.default]) { if $0 == .beforeWaiting { asleep.fire() } }
            #expect(loop.run(mode: .default, timeout: 30, returnAfterSourceHandled: false) == .stopped)
            #expect(seen.values == [.entry, .beforeTimers, .beforeSources, .beforeWaiting, .afterWaiting, .exit])
        }
    }

    @Test func aNestedRunInAnotherModeReportsItsOwnEntryAndExit() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            loop.add(MessagePort(), forMode: .default)
            loop.add(MessagePort(), forMode: Self.other)
            let seen = Recorder<String>()
            let observer = RunLoopObserver(activities: .allActivities) { _, activity in
                seen.append("\(activity.rawValue)@\(PortRunLoop.current.currentMode?.rawValue ?? "-")")
            }
            loop.add(observer, forMode: .common)
            loop.add(observer, forMode: Self.other)
            loop.add(RunLoopTimer(fireAt: .distantPast) { _ in
                PortRunLoop.current.run(mode: Self.other, timeout: 0, returnAfterSourceHandled: false)
            }, forMode: .default)
            #expect(loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: false) == .timedOut)
            let d = RunLoop.Mode.default.rawValue, o = Self.other.rawValue
            #expect(seen.values == ["1@\(d)", "2@\(d)", "4@\(d)", "1@\(o)", "2@\(o)", "4@\(o)", "128@\(o)", "128@\(d)"])
        }
    }

    @Test func anEmptyModeReturnsBeforeEntry() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            // Observers alone do not keep a mode alive, and an empty mode reports nothing.
            let seen = Self.recording(loop, in: [.default, Self.other])
            #expect(loop.run(mode: .default, timeout: 10, returnAfterSourceHandled: false) == .finished)
            #expect(!loop.run(mode: Self.other, before: .distantFuture))
            #expect(seen.values.isEmpty)
        }
    }

    @Test func aRunOfAModeTheObserverIsNotInReportsNothing() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            loop.add(MessagePort(), forMode: Self.other)
            let seen = Self.recording(loop, in: [.default])
            #expect(loop.run(mode: Self.other, timeout: 0, returnAfterSourceHandled: false) == .timedOut)
            #expect(seen.values.isEmpty)
        }
    }
}
