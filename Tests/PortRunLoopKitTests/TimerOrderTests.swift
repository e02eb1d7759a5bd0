import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Timer order and re-arming: equal fire dates fire in the order the timers were added, a timer's
/// block can re-arm it by setting its fire date, and setting the date from another thread moves it.
@Suite(.timeLimit(.minutes(1))) struct TimerOrderTests {
    @Test func equalFireDatesFireInTheOrderAdded() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let fired = Recorder<Int>()
            let date = Date(timeIntervalSinceNow: 0.02)
            for index in 0..<500 {
                loop.add(RunLoopTimer(fireAt: date) { _ in fired.append(index) }, forMode: .default)
            }
            while fired.count < 500 { loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)) }
            #expect(fired.values == Array(0..<500))
        }
    }

    @Test func earlierDatesFireFirstWhateverTheOrderAdded() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let fired = Recorder<Int>()
            let base = Date(timeIntervalSinceNow: 0.02)
            let offsets = [5, 1, 4, 2, 3, 0]
            for offset in offsets {
                loop.add(RunLoopTimer(fireAt: base.addingTimeInterval(Double(offset) * 0.001)) { _ in fired.append(offset) },
                         forMode: .default)
            }
            while fired.count < offsets.count { loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)) }
            #expect(fired.values == offsets.sorted())
        }
    }

    @Test func aOneShotTimerReArmedFromItsOwnBlockFiresAgainAtTheNewDate() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let fires = Recorder<Date>()
            let armedFor = Recorder<Date>()
            let first = Date(timeIntervalSinceNow: 0.01)
            armedFor.append(first)
            let timer = RunLoopTimer(fireAt: first) { timer in
                fires.append(Date())
                if fires.count < 3 {
                    let next = Date(timeIntervalSinceNow: 0.01)
                    armedFor.append(next)
                    timer.fireDate = next
                }
            }
            loop.add(timer, forMode: .default)
            while fires.count < 3 { loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)) }
            #expect(fires.count == 3)
            for (fire, due) in zip(fires.values, armedFor.values) { #expect(fire >= due) }
            // Not re-armed by its third fire: a one-shot timer, it is then invalidated.
            #expect(!timer.isValid)
            #expect(loop.run(mode: .default, before: Date(timeIntervalSinceNow: -1)) == false)
        }
    }

    @Test func aRepeatingTimerReArmedFromItsBlockTakesTheNewDate() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let fires = Recorder<Date>()
            let pushedTo = Date(timeIntervalSinceNow: 0.05)
            let timer = RunLoopTimer(fireAt: Date(), interval: 0.001, repeats: true) { timer in
                fires.append(Date())
                if fires.count == 1 { timer.fireDate = pushedTo }
                if fires.count == 2 { timer.invalidate() }
            }
            loop.add(timer, forMode: .default)
            while fires.count < 2 { loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)) }
            #expect(fires.values[1] >= pushedTo)
        }
    }

    @Test func settingTheFireDateFromAnotherThreadMovesTheTimer() throws {
        let thread = try RunLoopThread(name: "timer-move")
        defer { thread.stop() }
        let fired = Signal()
        let firedAt = Recorder<Date>()
        let timer = RunLoopTimer(fireAt: .distantFuture) { _ in
            firedAt.append(Date())
            fired.fire()
        }
        thread.loop.add(timer, forMode: .common)
        try thread.loop.performAndWait {} // scheduled
        let due = Date(timeIntervalSinceNow: 0.02)
        timer.fireDate = due
        #expect(fired.wait())
        #expect(firedAt.values.first.map { $0 >= due } == true)
    }

    @Test func aTimerWithAToleranceNeverFiresBeforeItsDate() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let firedAt = Recorder<Date>()
            let due = Date(timeIntervalSinceNow: 0.02)
            loop.add(RunLoopTimer(fireAt: due, tolerance: 0.01) { _ in firedAt.append(Date()) }, forMode: .default)
            while firedAt.count < 1 { loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)) }
            #expect(firedAt.values[0] >= due)
        }
    }

    @Test func aTimerWithAToleranceSleepsOnUntilTheNextTimerAndFiresWithIt() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let firedAt = Locked<[String: Date]>([:])
            let start = Date()
            let tolerant = start.addingTimeInterval(0.01)
            let exact = start.addingTimeInterval(0.06)
            loop.add(RunLoopTimer(fireAt: tolerant, tolerance: 1) { _ in firedAt.withLock { $0["tolerant"] = Date() } }, forMode: .default)
            loop.add(RunLoopTimer(fireAt: exact) { _ in firedAt.withLock { $0["exact"] = Date() } }, forMode: .default)
            while firedAt.withLock({ $0.count }) < 2 { loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)) }
            let fired = firedAt.withLock { $0 }
            // Nothing else woke the loop: the tolerant timer waited for the exact one, within its tolerance.
            #expect(fired["tolerant"]! >= exact)
            #expect(fired["tolerant"]! <= tolerant.addingTimeInterval(1))
            #expect(fired["exact"]! >= exact)
        }
    }

    @Test func aFireDateSetFromAnotherThreadJustBeforeTheTimerFiresDecides() throws {
        let thread = try RunLoopThread(name: "timer-rearm-race")
        defer { thread.stop() }
        let fires = Recorder<Date>()
        let fired = Signal()
        let firstDate = Date(timeIntervalSinceNow: 0.03)
        let timer = RunLoopTimer(fireAt: firstDate) { _ in
            fires.append(Date())
            fired.fire()
        }
        thread.loop.add(timer, forMode: .common)
        try thread.loop.performAndWait {} // in the heap, due at `firstDate`
        let due = Signal()
        let dateSet = Signal()
        thread.loop.perform {
            // Keep the loop inside this turn's queued work until the timer is due, and until the
            // other thread has moved its date: the turn then reaches the timer with its old date
            // passed and the other thread's re-arm still queued.
            while Date() < firstDate { sched_yield() }
            due.fire()
            _ = dateSet.wait()
        }
        #expect(due.wait())
        let newDate = Date(timeIntervalSinceNow: 0.03)
        timer.fireDate = newDate
        dateSet.fire()
        // The date set before the turn reached the timer decides: one fire, at the new date (a
        // pushed-back timeout does not fire for its old date).
        #expect(fired.wait(seconds: 10), "the date set from another thread was dropped")
        try thread.loop.performAndWait {}
        #expect(fires.values.count == 1)
        if let first = fires.values.first { #expect(first >= newDate) }
        #expect(!timer.isValid)
    }
}
