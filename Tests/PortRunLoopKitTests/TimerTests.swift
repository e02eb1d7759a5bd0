import Foundation
import PortRunLoopKit
import Synchronization
import Testing
import PortRunLoopTestSupport

/// RunLoopTimer: never early, wakes a sleeping loop when added from another thread, repeats.
@Suite(.timeLimit(.minutes(1))) struct TimerTests {
    @Test func timerAddedFromAnotherThreadWakesASleepingLoop() throws {
        let thread = try RunLoopThread(name: "sleeper")
        defer { thread.stop() }
        // Make sure the loop is idle (it has run everything queued and gone back to sleep).
        try thread.loop.performAndWait {}
        let fired = Signal()
        let firedAt = Locked<Date?>(nil)
        let fireDate = Date(timeIntervalSinceNow: 0.05)
        let timer = RunLoopTimer(fireAt: fireDate) { _ in
            firedAt.withLock { $0 = Date() }
            fired.fire()
        }
        thread.loop.add(timer, forMode: .common)
        #expect(fired.wait())
        #expect(try #require(firedAt.withLock { $0 }) >= fireDate)
    }

    @Test func oneShotTimerFiresOnceAtItsDateNeverBefore() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let fireDate = Date(timeIntervalSinceNow: 0.1)
            let fires = Recorder<Date>()
            let timer = RunLoopTimer(fireAt: fireDate) { _ in fires.append(Date()) }
            loop.add(timer, forMode: .default)
            #expect(timer.isValid)
            loop.run() // returns once the timer fired and the mode ran dry
            #expect(fires.count == 1)
            #expect(fires.values[0] >= fireDate)
            #expect(!timer.isValid)
        }
    }

    @Test func pastDateFiresOnTheNextTurn() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let fires = Recorder<Bool>()
            loop.add(RunLoopTimer(fireAt: .distantPast) { _ in fires.append(true) }, forMode: .default)
            #expect(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)))
            #expect(fires.values == [true])
        }
    }

    @Test func repeatingTimerKeepsItsCadenceUntilInvalidated() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let start = Date()
            let fires = Recorder<Date>()
            let timer = RunLoopTimer(fireAt: start.addingTimeInterval(0.01), interval: 0.01, repeats: true) { timer in
                fires.append(Date())
                if fires.count == 5 { timer.invalidate() }
            }
            loop.add(timer, forMode: .default)
            loop.run()
            #expect(fires.count == 5)
            // Each fire is at or after its scheduled slot: start + 0.01·k.
            for (k, date) in fires.values.enumerated() {
                #expect(date >= start.addingTimeInterval(0.01 * Double(k + 1)))
            }
        }
    }

    @Test func invalidatedFromAnotherThreadNeverFires() throws {
        let thread = try RunLoopThread(name: "timers")
        defer { thread.stop() }
        let fired = Recorder<Bool>()
        let timer = RunLoopTimer(fireAt: Date(timeIntervalSinceNow: 0.05)) { _ in fired.append(true) }
        thread.loop.add(timer, forMode: .common)
        timer.invalidate()
        // A later timer in the same loop proves the loop went past the first one's date.
        let later = Signal()
        thread.loop.add(RunLoopTimer(fireAt: Date(timeIntervalSinceNow: 0.1)) { _ in later.fire() }, forMode: .common)
        #expect(later.wait())
        #expect(fired.values.isEmpty)
    }

    @Test func timerOnlyFiresInItsModes() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let other = RunLoop.Mode("other")
            loop.add(MessagePort(), forMode: other)
            let fires = Recorder<Bool>()
            let timer = RunLoopTimer(fireAt: .distantPast) { _ in fires.append(true) }
            loop.add(timer, forMode: .default)
            #expect(loop.run(mode: other, timeout: 0.05, returnAfterSourceHandled: true) == .timedOut)
            #expect(fires.values.isEmpty)
            #expect(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)))
            #expect(fires.values == [true])
        }
    }
}
