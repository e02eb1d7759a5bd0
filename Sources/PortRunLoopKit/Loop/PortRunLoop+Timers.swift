import Foundation

/// A timer scheduled in a loop: its group (the modes it is in) and its place in that group's heap.
///
/// Thread-safety: the loop's thread only.
final class TimerRegistration {
    let timer: RunLoopTimer
    var group: SourceGroup
    /// Its fire date, in seconds since the reference date (the wall clock, as `Date`): the heap's
    /// key. Timers compare dates exactly, so equal dates tie and fire in scheduling order.
    /// `.infinity` for dates so far away they never come (`.distantFuture`).
    var due: Double = .infinity
    /// Its tolerance: how far past `due` the loop may sleep before it fires (see ``TimerHeap/wake``).
    var slack: Double = 0
    /// The loop's schedule counter when it was last scheduled (ties between equal `due`s).
    var sequence: UInt64 = 0
    /// Its index in `group.timers`, or -1 while it is not in the heap (firing, or unregistered).
    var heapIndex = -1
    /// The timer's ``RunLoopTimer/fireDateVersion`` when it was last scheduled: a later version
    /// means its date was set since (from its block or another thread), so the fire that follows
    /// re-arms it for that date instead of moving it on or invalidating it.
    var scheduledVersion: UInt64 = 0
    /// True while its block runs (counted in its group's ``SourceGroup/firingTimers``).
    var isFiring = false

    init(timer: RunLoopTimer, group: SourceGroup) {
        self.timer = timer
        self.group = group
    }
}

extension PortRunLoop {
    /// Schedules `timer` in `mode` (`-[NSRunLoop addTimer:forMode:]`). A sleeping loop wakes to
    /// re-arm. A timer belongs to one loop (precondition); an invalidated timer is ignored.
    ///
    /// Thread-safety: any thread.
    public func add(_ timer: RunLoopTimer, forMode mode: RunLoop.Mode) {
        guard timer.attach(to: self) else { return }
        if isCurrentThread { registerTimer(timer, mode: mode); return } // no closure to allocate
        // A shut-down loop invalidates its timers; one added to it afterwards gets the same fate.
        if !onOwner({ loop in loop.registerTimer(timer, mode: mode) }) { timer.invalidate() }
    }

    private func registerTimer(_ timer: RunLoopTimer, mode: RunLoop.Mode) {
        guard timer.isValid else { return }
        if inbox.withLock({ $0.isShutDown }) { timer.invalidate(); return }
        if let registration = timers[ObjectIdentifier(timer)] {
            let modes = registration.group.modes.inserting(mode)
            guard modes != registration.group.modes else { return }
            move(registration, to: sourceGroup(for: modes))
        } else {
            let registration = TimerRegistration(timer: timer, group: sourceGroup(forMode: mode))
            timers[ObjectIdentifier(timer)] = registration
            schedule(registration)
        }
    }

    /// Puts `registration` in its group's heap, due at its timer's fire date, after every timer
    /// scheduled before it.
    private func schedule(_ registration: TimerRegistration) {
        let (fireDate, tolerance, version) = registration.timer.schedule
        registration.scheduledVersion = version
        let seconds = fireDate.timeIntervalSinceReferenceDate
        registration.due = seconds >= Date.distantFuture.timeIntervalSinceReferenceDate ? .infinity : seconds
        registration.slack = tolerance
        registration.sequence = nextTimerSequence
        nextTimerSequence &+= 1
        registration.group.timers.insert(registration)
    }

    private func move(_ registration: TimerRegistration, to group: SourceGroup) {
        let wasInHeap = registration.heapIndex >= 0
        registration.group.timers.remove(registration)
        if registration.isFiring {
            registration.group.firingTimers -= 1
            group.firingTimers += 1
        }
        registration.group = group
        // Same due time and sequence: moving between modes keeps its place among equal dates.
        if wasInHeap { group.timers.insert(registration) }
    }

    /// Owner: the timer's fire date was set (``RunLoopTimer/fireDate``): re-schedule it, unless it
    /// is firing (the firing code then re-schedules it when its block returns).
    func timerFireDateChanged(_ timer: RunLoopTimer) {
        guard let registration = timers[ObjectIdentifier(timer)], registration.heapIndex >= 0 else { return }
        registration.group.timers.remove(registration)
        schedule(registration)
    }

    func unregisterTimer(_ timer: RunLoopTimer) {
        guard let registration = timers.removeValue(forKey: ObjectIdentifier(timer)) else { return }
        registration.group.timers.remove(registration)
        setFiring(registration, false)
    }

    private func setFiring(_ registration: TimerRegistration, _ firing: Bool) {
        guard registration.isFiring != firing else { return }
        registration.isFiring = firing
        registration.group.firingTimers += firing ? 1 : -1
    }

    /// The timer of the running mode due first, and its group.
    private func earliestTimer() -> TimerRegistration? {
        guard !timers.isEmpty else { return nil }
        var earliest: TimerRegistration?
        for group in activeGroups {
            guard let first = group.timers.first else { continue }
            if let current = earliest,
               current.due < first.due || (current.due == first.due && current.sequence < first.sequence) { continue }
            earliest = first
        }
        return earliest
    }

    /// The running mode's earliest fire date (seconds since the reference date; `.infinity` for
    /// none).
    func nextTimerDue() -> Double { earliestTimer()?.due ?? .infinity }

    /// When the loop must wake for the running mode's timers (seconds since the reference date):
    /// the earliest of its groups' ``TimerHeap/wake``s.
    func nextTimerWake() -> Double {
        guard !timers.isEmpty else { return .infinity }
        var wake = Double.infinity
        for group in activeGroups { wake = min(wake, group.timers.wake) }
        return wake
    }

    /// Fires the running mode's timers whose fire date has come, earliest first (equal dates in
    /// the order they were scheduled). A timer scheduled during this call (including a repeating
    /// timer's next fire) waits for the next turn, so a timer that keeps re-arming itself cannot
    /// hold the loop.
    ///
    /// While its block runs a timer is out of its heap: a nested run cannot fire it again (CF's
    /// "firing" guard). When the block returns, a repeating timer moves on by whole intervals past
    /// the moment it fired, and a one-shot timer is invalidated, unless its fire date was set since
    /// it was scheduled (by the block or by another thread), which re-arms it for that date.
    func fireDueTimers() -> Bool {
        guard nextTimerDue() != .infinity else { return false }
        var handled = false
        let nowDate = Date()
        let now = nowDate.timeIntervalSinceReferenceDate
        let limit = nextTimerSequence
        let ambient = innermostRunHasAmbientContext
        while let registration = earliestTimer(), registration.due <= now, registration.sequence < limit {
            registration.group.timers.remove(registration)
            let timer = registration.timer
            guard timer.isValid else { unregisterTimer(timer); continue }
            if timer.fireDateVersion != registration.scheduledVersion {
                // Its date was set (from another thread) since it was scheduled, and that thread's
                // re-arm is still queued: the new date decides, the old one does not fire.
                schedule(registration)
                continue
            }
            if timer.gate.tryEnter() {
                setFiring(registration, true)
                // A timer belongs to the loop, not to a caller: it runs with no `ServiceContext`.
                withCallerContext(nil, ambient: ambient) { timer.block(timer) }
                setFiring(registration, false)
                timer.gate.exit()
                timersFired.increment()
                handled = true
            }
            guard timers[ObjectIdentifier(timer)] === registration, timer.isValid else { continue }
            if timer.fireDateVersion != registration.scheduledVersion {
                // Its date was set since it was scheduled: by its block, or by another thread
                // while the loop was deciding to fire it (that thread's re-arm found it out of
                // the heap). Either way the new date stands.
                schedule(registration)
            } else if timer.repeats {
                timer.advance(after: nowDate)
                schedule(registration)
            } else {
                timer.invalidate()
            }
        }
        return handled
    }
}
