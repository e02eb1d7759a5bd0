import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Foundation's `Timer` fired by a PortRunLoop (`add(_:forMode:)`): never early, repeating on its
/// cadence, invalidation and date changes honoured. Timers are made with
/// `Timer(fire:interval:repeats:block:)`: on Linux `Timer(timeInterval:repeats:block:)` gets the
/// current date as its fire date.
@Suite(.timeLimit(.minutes(1))) struct FoundationTimerTests {
    @Test func aOneShotTimerNeverFiresEarlyAndFiresOnce() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let firedAt = Recorder<Date>()
            let date = Date().addingTimeInterval(0.05)
            let timer = Timer(fire: date, interval: 0, repeats: false) { _ in firedAt.append(Date()) }
            loop.add(timer, forMode: .default)
            loop.run() // returns once the fired one-shot timer has left the mode empty
            #expect(firedAt.count == 1)
            #expect(firedAt.values[0] >= date)
            #expect(!timer.isValid)
        }
    }

    @Test func aRepeatingTimerFiresOnItsCadenceWithoutDrift() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let interval = 0.02
            let start = Date().addingTimeInterval(interval)
            let fires = Recorder<(date: Date, at: Date)>()
            let timer = Timer(fire: start, interval: interval, repeats: true) { timer in
                fires.append((timer.fireDate, Date()))
                if fires.count == 6 { timer.invalidate() }
            }
            loop.add(timer, forMode: .default)
            loop.run()
            let recorded = fires.values
            #expect(recorded.count == 6)
            for fire in recorded { #expect(fire.at >= fire.date, "fired early") }
            for (earlier, later) in zip(recorded, recorded.dropFirst()) {
                // Each date is on the cadence of the first: whole intervals, no drift from the
                // time a fire happened to take.
                let steps = later.date.timeIntervalSince(earlier.date) / interval
                #expect(steps >= 0.99 && abs(steps - steps.rounded()) < 0.001, "off the cadence: \(steps)")
            }
            let total = recorded.last!.date.timeIntervalSince(start) / interval
            #expect(abs(total - total.rounded()) < 0.001)
        }
    }

    @Test func aTimerInvalidatedFromAnotherThreadNeverFires() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let fired = Recorder<Bool>()
            nonisolated(unsafe) let timer = Timer(fire: Date().addingTimeInterval(0.1), interval: 0.01, repeats: true) { _ in
                fired.append(true)
            }
            loop.add(timer, forMode: .default)
            let invalidated = Signal()
            Thread {
                timer.invalidate()
                invalidated.fire()
            }.start()
            #expect(invalidated.wait())
            // Past the timer's date: the loop's own timer ends the run.
            loop.add(RunLoopTimer(fireAt: Date().addingTimeInterval(0.2)) { _ in loop.stop() }, forMode: .default)
            #expect(loop.run(mode: .default, timeout: 30, returnAfterSourceHandled: false) == .stopped)
            #expect(fired.count == 0)
            #expect(loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: false) == .finished,
                    "the invalidated timer was let go of")
        }
    }

    @Test func aFireDatePushedBackOnTheLoopsThreadIsHonoured() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let firedAt = Recorder<Date>()
            nonisolated(unsafe) let timer = Timer(fire: Date().addingTimeInterval(0.05), interval: 0, repeats: false) { _ in
                firedAt.append(Date())
            }
            loop.add(timer, forMode: .default)
            let pushedTo = Locked<Date?>(nil)
            loop.add(RunLoopTimer(fireAt: Date().addingTimeInterval(0.01)) { _ in
                let later = Date().addingTimeInterval(0.2)
                timer.fireDate = later
                pushedTo.withLock { $0 = later }
            }, forMode: .default)
            loop.run()
            #expect(firedAt.count == 1)
            let later = try #require(pushedTo.withLock { $0 })
            #expect(firedAt.values[0] >= later, "fired for its old date")
        }
    }

    @Test func aFireDateBroughtForwardOnTheLoopsThreadIsHonouredBeforeTheLoopSleeps() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let firedAt = Recorder<Date>()
            nonisolated(unsafe) let timer = Timer(fire: Date().addingTimeInterval(30), interval: 0, repeats: false) { _ in
                firedAt.append(Date())
            }
            loop.add(timer, forMode: .default)
            let start = Date()
            loop.add(RunLoopTimer(fireAt: Date().addingTimeInterval(0.01)) { _ in
                timer.fireDate = Date().addingTimeInterval(0.05)
            }, forMode: .default)
            loop.run()
            #expect(firedAt.count == 1)
            #expect(firedAt.values[0].timeIntervalSince(start) < 10, "slept until the old date")
        }
    }
}
