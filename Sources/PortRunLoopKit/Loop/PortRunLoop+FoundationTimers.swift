import Foundation

extension PortRunLoop {
    /// Fires Foundation's `timer` on this loop, in `mode` (`-[NSRunLoop addTimer:forMode:]`): at its
    /// `fireDate` (never before), within its `tolerance`, through its `fire()`; a repeating one
    /// (`timeInterval` > 0) then moves on by whole intervals past the clock read after its block,
    /// as ``RunLoopTimer`` does (T2), by setting its `fireDate`. Adding it in a second mode adds it
    /// there too. Make it with `Timer(fire:interval:repeats:block:)`: on Linux
    /// `Timer(timeInterval:repeats:block:)` gets the current date as its fire date.
    ///
    /// `invalidate()` and a new `fireDate` or `tolerance` set on the loop's thread take effect
    /// before the loop next sleeps. Set from another thread, they are seen when the loop next
    /// wakes (Foundation's `Timer` tells no one of a change): a date pushed later or an invalidation
    /// is always seen before the timer fires, but a date brought earlier waits for the wake-up the
    /// old date (or anything else) causes; call ``wakeUp()`` after such a change.
    ///
    /// Thread-safety: any thread (the timer is handed to the loop's thread, which alone touches it
    /// from then on).
    public func add(_ timer: Timer, forMode mode: RunLoop.Mode) {
        let handed = FoundationTimerHandOff(timer: timer)
        if isCurrentThread { addFoundationTimer(handed.timer, mode: mode); return }
        registerOnOwner { $0.addFoundationTimer(handed.timer, mode: mode) }
    }

    private func addFoundationTimer(_ timer: Timer, mode: RunLoop.Mode) {
        guard timer.isValid, !ownerShutDown else { return }
        let id = ObjectIdentifier(timer)
        let driver: FoundationTimerDriver
        if let known = foundationTimers[id] {
            driver = known
        } else {
            driver = FoundationTimerDriver(timer, loop: self)
            foundationTimers[id] = driver
            if foundationTimerCheck == nil {
                let check = BeforeWaitingObserver(callout: { [unowned self] _ in
                    syncFoundationTimers()
                    return false
                }, shutDown: { [unowned self] in
                    foundationTimers.removeAll()
                    foundationTimerCheck = nil
                })
                foundationTimerCheck = check
                addBeforeWaitingObserver(check)
            }
        }
        add(driver.driver, forMode: mode)
    }

    /// Before a sleep: each Foundation timer's invalidation and date as they now stand.
    func syncFoundationTimers() {
        for driver in Array(foundationTimers.values) { driver.sync() }
    }

    /// A Foundation timer is done; the before-sleep check goes with the last one.
    func forgetFoundationTimer(_ driver: FoundationTimerDriver) {
        foundationTimers.removeValue(forKey: ObjectIdentifier(driver.timer))
        if foundationTimers.isEmpty, let check = foundationTimerCheck {
            foundationTimerCheck = nil
            beforeWaitingObservers.removeAll { $0 === check }
        }
    }
}

/// A `Timer` on its way to its loop's thread (`Timer` is not `Sendable`).
///
/// Thread-safety: `@unchecked Sendable`: the sending thread lets go of it once it has handed it
/// over; the loop's thread alone uses it then.
private struct FoundationTimerHandOff: @unchecked Sendable {
    let timer: Timer
}
