import Foundation
import PortRunLoopKit
import PortRunLoopStressEngine
import Synchronization
import Testing
import PortRunLoopTestSupport

/// Bad timer input: NaN, negative, infinite and huge intervals and dates. Each is a
/// precondition naming the mistake or a documented clamp — never a hang, a busy loop or a crash.
@Suite(.timeLimit(.minutes(1))) struct TimerMisuseTests {
    @Test func nanFireDateIsAPreconditionFailure() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RunLoopTimer(fireAt: Date(timeIntervalSinceReferenceDate: .nan)) { _ in }
        }
        expectMessage(result, contains: "fire date is NaN")
    }

    @Test func nanIntervalIsAPreconditionFailure() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RunLoopTimer(fireAt: Date(), interval: .nan, repeats: true) { _ in }
        }
        expectMessage(result, contains: "interval must be finite")
    }

    @Test func infiniteIntervalIsAPreconditionFailure() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RunLoopTimer(fireAt: Date(), interval: .infinity, repeats: true) { _ in }
        }
        expectMessage(result, contains: "interval must be finite")
    }

    @Test func nanAfterIntervalIsAPreconditionFailure() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RunLoopTimer(after: .nan) { _ in }
        }
        expectMessage(result, contains: "interval must be finite")
    }

    @Test func nanToleranceIsAPreconditionFailure() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let timer = RunLoopTimer(fireAt: .distantFuture) { _ in }
            timer.tolerance = .nan
        }
        expectMessage(result, contains: "NaN")
    }

    @Test func negativeIntervalsAndTolerancesAreClamped() {
        let repeating = RunLoopTimer(fireAt: Date(), interval: -5, repeats: true) { _ in }
        #expect(repeating.interval == 0.0001, "a repeating timer's interval ≤ 0 becomes 0.1 ms (Foundation's rule)")
        let oneShot = RunLoopTimer(fireAt: Date(), interval: -5, repeats: false) { _ in }
        #expect(oneShot.interval == 0)
        oneShot.tolerance = -1
        #expect(oneShot.tolerance == 0)
    }

    @Test func negativeAfterFiresOnTheNextTurn() throws {
        try onLoopThread { c in
            let loop = PortRunLoop.current
            let fired = CallCounter()
            let timer = RunLoopTimer(after: -10) { _ in fired.increment() }
            loop.add(timer, forMode: .default)
            c.expect(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 10)))
            c.expect(fired.value == 1)
            c.expect(!timer.isValid)
        }
    }

    @Test func aDueTimerFiresInAZeroTimeoutRun() throws {
        // CFRunLoopRunInMode(mode, 0, …) handles whatever is ready, due timers included.
        try onLoopThread { c in
            let loop = PortRunLoop.current
            let fired = CallCounter()
            loop.add(RunLoopTimer(fireAt: .distantPast) { _ in fired.increment() }, forMode: .default)
            let result = loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: true)
            c.expect(fired.value == 1, "a timer whose date has passed must fire in a polling run")
            // A fired timer is not a handled source (Semantics R3, CFRunLoop's
            // `sourceHandledThisLoop`): the run ends because the fired one-shot timer left the
            // mode empty.
            c.expect(result == .finished)
            c.expect(!loop.run(mode: .default, before: .distantPast), "the fired one-shot timer left the mode empty")
        }
    }

    @Test func aDueTimerFiresInARunBeforeAPastDate() throws {
        try onLoopThread { c in
            let loop = PortRunLoop.current
            let fired = CallCounter()
            loop.add(RunLoopTimer(fireAt: Date(timeIntervalSinceNow: -1)) { _ in fired.increment() }, forMode: .default)
            c.expect(loop.run(mode: .default, before: .distantPast))
            c.expect(fired.value == 1, "a timer whose date has passed must fire in run(mode:before:) with a past date")
        }
    }

    @Test func hugeIntervalFiresOnceAndStaysScheduled() throws {
        try onLoopThread { c in
            let loop = PortRunLoop.current
            let fired = CallCounter()
            let timer = RunLoopTimer(fireAt: Date(timeIntervalSinceNow: -1), interval: 1e300, repeats: true) { _ in
                fired.increment()
            }
            loop.add(timer, forMode: .default)
            c.expect(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 10)))
            c.expect(fired.value == 1)
            c.expect(timer.isValid)
            c.expect(timer.fireDate.timeIntervalSinceNow > 1e299)
            // Not due again: a short run times out (true: the mode still has the timer) without firing.
            c.expect(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 0.02)))
            c.expect(fired.value == 1)
            timer.invalidate()
            c.expect(!loop.run(mode: .default, before: .distantPast))
        }
    }

    @Test func distantAndInfiniteFutureDatesNeverFireButKeepTheModeAlive() throws {
        try onLoopThread { c in
            let loop = PortRunLoop.current
            let fired = CallCounter()
            let far = RunLoopTimer(fireAt: .distantFuture) { _ in fired.increment() }
            let infinite = RunLoopTimer(fireAt: Date(timeIntervalSinceReferenceDate: .infinity)) { _ in fired.increment() }
            let huge = RunLoopTimer(fireAt: Date(timeIntervalSinceReferenceDate: 1e300)) { _ in fired.increment() }
            for t in [far, infinite, huge] { loop.add(t, forMode: .default) }
            c.expect(loop.run(mode: .default, timeout: 0.02, returnAfterSourceHandled: false) == .timedOut)
            c.expect(fired.value == 0)
            for t in [far, infinite, huge] { t.invalidate() }
            c.expect(loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: false) == .finished)
        }
    }

    @Test func negativeInfinityFireDateFiresOnceThenKeepsARealCadence() throws {
        // A repeating timer due "infinitely long ago" must not turn its date into NaN (which would
        // make it fire on every turn, a busy loop).
        try onLoopThread { c in
            let loop = PortRunLoop.current
            let fired = CallCounter()
            let timer = RunLoopTimer(fireAt: Date(timeIntervalSinceReferenceDate: -.infinity), interval: 3600, repeats: true) { _ in
                fired.increment()
            }
            loop.add(timer, forMode: .default)
            c.expect(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 10)))
            c.expect(fired.value == 1)
            c.expect(!timer.fireDate.timeIntervalSinceReferenceDate.isNaN, "the next fire date became NaN")
            for _ in 0..<5 { loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: false) }
            c.expect(fired.value == 1, "a timer with a one-hour interval fired again at once")
            timer.invalidate()
        }
    }

    @Test func aTimerBelongsToOneLoop() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let a = try! RunLoopThread(name: "timer-a")
            let b = try! RunLoopThread(name: "timer-b")
            let timer = RunLoopTimer(fireAt: .distantFuture) { _ in }
            a.loop.add(timer, forMode: .default)
            b.loop.add(timer, forMode: .default)
        }
        expectMessage(result, contains: "already scheduled in another PortRunLoop")
    }

    @Test func invalidatingTwiceAndAddingAnInvalidTimerAreNoOps() throws {
        try onLoopThread { c in
            let loop = PortRunLoop.current
            let fired = CallCounter()
            let timer = RunLoopTimer(fireAt: .distantPast) { _ in fired.increment() }
            timer.invalidate()
            timer.invalidate()
            loop.add(timer, forMode: .default)
            c.expect(!loop.run(mode: .default, before: .distantPast), "an invalid timer must not make the mode non-empty")
            c.expect(fired.value == 0)
        }
    }
}
