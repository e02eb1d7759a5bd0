import Foundation

/// A timer scheduled in a loop: its group (the modes it is in) and its place in that group's heap.
///
/// Thread-safety: the loop's thread only.
final class TimerRegistration {
    let timer: RunLoopTimer
    var group: SourceGroup
    /// The latest time it may fire, on the monotonic clock: its fire date plus its tolerance
    /// (`.infinity`: never, e.g. `.distantFuture`). The heap's key, so a timer with a tolerance lets
    /// the loop sleep past its fire date, up to this time.
    var due: Double = .infinity
    /// The loop's schedule counter when it was last scheduled (ties between equal `due`s).
    var sequence: UInt64 = 0
    /// Its index in `group.timers`, or -1 while it is not in the heap (firing, or unregistered).
    var heapIndex = -1
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
            let registration = TimerRegistration(timer: timer, group: sourceGroup(for: ModeSet([mode])))
            timers[ObjectIdentifier(timer)] = registration
            schedule(registration)
        }
    }

    /// Puts `registration` in its group's heap, due at its timer's fire date plus tolerance, after
    /// every timer scheduled before it.
    private func schedule(_ registration: TimerRegistration) {
        let (fireDate, tolerance) = registration.timer.schedule
        registration.due = fireDate.monotonicDeadline + tolerance
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
        var earliest: TimerRegistration?
        for group in frames[frames.count - 1].groups {
            guard let first = group.timers.first else { continue }
            if let current = earliest,
               current.due < first.due || (current.due == first.due && current.sequence < first.sequence) { continue }
            earliest = first
        }
        return earliest
    }

    /// When the running mode's next timer is due (monotonic; `.infinity` for none).
    func nextTimerDue() -> Double { earliestTimer()?.due ?? .infinity }

    /// Fires the running mode's timers that are due (their fire date plus tolerance has come),
    /// earliest first (equal dates in the order they were scheduled). A timer scheduled during this call (including a repeating timer's next
    /// fire) waits for the next turn, so a timer that keeps re-arming itself cannot hold the loop.
    ///
    /// While its block runs a timer is out of its heap: a nested run cannot fire it again (CF's
    /// "firing" guard). When the block returns, a repeating timer moves on by whole intervals past
    /// the moment it fired, and a one-shot timer is invalidated, unless the block set its fire date,
    /// which re-arms it for that date.
    func fireDueTimers() -> Bool {
        var handled = false
        let now = System.monotonicSeconds()
        let limit = nextTimerSequence
        while let registration = earliestTimer(), registration.due <= now, registration.sequence < limit {
            registration.group.timers.remove(registration)
            let timer = registration.timer
            guard timer.isValid else { unregisterTimer(timer); continue }
            let wallNow = Date()
            if wallNow < timer.fireDate {
                // libevent's monotonic clock and the wall clock disagree by a hair: never early.
                schedule(registration)
                continue
            }
            let dateVersion = timer.fireDateVersion
            if timer.gate.tryEnter() {
                setFiring(registration, true)
                timer.block(timer)
                setFiring(registration, false)
                timer.gate.exit()
                timersFired.increment()
                handled = true
            }
            guard timers[ObjectIdentifier(timer)] === registration, timer.isValid else { continue }
            if timer.fireDateVersion != dateVersion {
                schedule(registration) // its block set a new fire date
            } else if timer.repeats {
                timer.advance(after: wallNow)
                schedule(registration)
            } else {
                timer.invalidate()
            }
        }
        return handled
    }
}
