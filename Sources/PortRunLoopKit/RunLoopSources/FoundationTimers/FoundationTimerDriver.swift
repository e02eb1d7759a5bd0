import Foundation

/// Drives one Foundation `Timer` added to a ``PortRunLoop`` (``PortRunLoop/add(_:forMode:)-(Timer,_)``):
/// a one-shot ``RunLoopTimer`` of the loop's own, re-armed by its block for each next fire, that
/// reads the `Timer`'s `fireDate`, `timeInterval`, `tolerance` and `isValid` and calls its `fire()`.
///
/// Foundation's `Timer` says nothing when its date changes or it is invalidated, so the loop asks:
/// before firing (a date pushed later re-arms instead of firing; an invalidated timer is let go
/// of), and before each sleep (``PortRunLoop/syncFoundationTimers()``), which is what makes a
/// change made on the loop's thread exact and one made on another thread seen at the loop's next
/// wake-up.
///
/// Thread-safety: `@unchecked Sendable` because `Timer` is not `Sendable`: made on the adding
/// thread, then touched on the loop's thread only (the `Timer`'s own members are locked by
/// Foundation).
final class FoundationTimerDriver: @unchecked Sendable {
    let timer: Timer
    /// The loop's timer firing this one (set once, in `init`).
    private(set) var driver: RunLoopTimer!
    /// The `Timer`'s fire date and tolerance as the driver last armed for them.
    @exclusivity(unchecked) private var armedDate: Date
    @exclusivity(unchecked) private var armedTolerance: TimeInterval
    private weak var loop: PortRunLoop?

    init(_ timer: Timer, loop: PortRunLoop) {
        self.timer = timer
        self.loop = loop
        armedDate = timer.fireDate
        armedTolerance = timer.tolerance
        driver = RunLoopTimer(fireAt: armedDate, tolerance: armedTolerance) { [weak self] _ in self?.fireIfDue() }
    }

    /// The driver's block: fires the `Timer` if it is still valid and its date has come, then
    /// arms for its next date (CF's rule for a repeating timer, unless `fire()`'s block set one).
    private func fireIfDue() {
        guard timer.isValid else { return end() }
        let date = timer.fireDate
        guard date <= Date() else { return arm(for: date) } // pushed later since it was armed
        timer.fire()
        let interval = timer.timeInterval
        guard timer.isValid, interval > 0 else { return end() }
        var next = timer.fireDate
        if next == date {
            // `fire()` does not move the date on: the first date on the cadence after the clock
            // read now, after the block (CFRunLoop's `__CFRunLoopDoTimer`).
            let now = Date()
            let missed = (now.timeIntervalSince(date) / interval).rounded(.down)
            next = date.addingTimeInterval(interval * (max(missed, 0) + 1))
            let ahead = next.timeIntervalSince(now)
            if !(ahead > 0 && ahead <= interval) { next = now.addingTimeInterval(interval) }
            timer.fireDate = next
        }
        arm(for: next)
    }

    /// Before the loop sleeps: picks up an invalidation or a new date or tolerance.
    func sync() {
        guard timer.isValid else { return end() }
        let tolerance = timer.tolerance
        if tolerance != armedTolerance {
            armedTolerance = tolerance
            driver.tolerance = tolerance
            arm(for: timer.fireDate, force: true)
        } else {
            arm(for: timer.fireDate)
        }
    }

    private func arm(for date: Date, force: Bool = false) {
        guard force || date != armedDate else { return }
        armedDate = date
        driver.fireDate = date
    }

    /// The `Timer` is done (invalidated, or a one-shot that fired): the loop lets go of it.
    private func end() {
        driver.invalidate()
        loop?.forgetFoundationTimer(self)
    }
}
