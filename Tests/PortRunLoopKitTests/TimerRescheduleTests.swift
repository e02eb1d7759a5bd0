import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// RunLoopTimer: a repeating timer is rescheduled from the clock read after its block (CFRunLoop's
/// rule), so a block slower than the interval skips the dates it overran.
@Suite(.timeLimit(.minutes(1))) struct TimerRescheduleTests {
    @Test func aSlowBlockSkipsTheDatesItOverran() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let interval = 0.010, work = 0.035
            let start = Date().addingTimeInterval(interval)
            let scheduled = Recorder<Date>()
            let timer = RunLoopTimer(fireAt: start, interval: interval, repeats: true) { timer in
                scheduled.append(timer.fireDate)
                // The block's work: 35 ms of it (a busy wait, synchronising nothing).
                let until = Date().addingTimeInterval(work)
                while Date() < until {}
                if scheduled.count == 6 { timer.invalidate() }
            }
            loop.add(timer, forMode: .default)
            loop.run()
            let dates = scheduled.values
            #expect(dates.count == 6)
            for (earlier, later) in zip(dates, dates.dropFirst()) {
                let gap = later.timeIntervalSince(earlier)
                // The first date on the cadence after the block returned: 40 ms on (or more, if the
                // machine was slow), never the next 10 ms step back to back.
                #expect(gap > work, "gap \(gap)")
                let steps = gap / interval
                #expect(abs(steps - steps.rounded()) < 0.01, "gap \(gap) is off the cadence")
            }
        }
    }
}
