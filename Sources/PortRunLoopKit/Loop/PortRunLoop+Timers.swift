import Foundation

extension PortRunLoop {
    /// Schedules `timer` in `mode` (`-[NSRunLoop addTimer:forMode:]`, `CFRunLoopAddTimer`). A
    /// sleeping loop wakes to re-arm. A timer belongs to one loop (precondition); an invalidated
    /// timer is ignored.
    ///
    /// Thread-safety: any thread.
    public func add(_ timer: RunLoopTimer, forMode mode: RunLoop.Mode) {
        guard timer.attach(to: self, mode: mode) else { return }
        if isCurrentThread { syncTimer(timer); return } // no closure to allocate
        // A shut-down loop invalidates its timers; one added to it afterwards gets the same fate.
        if !registerOnOwner({ loop in loop.syncTimer(timer) }) { timer.invalidate() }
    }

    /// Takes `timer` out of `mode` (`CFRunLoopRemoveTimer`): it stays valid, and scheduled in its
    /// other modes; taken out of all of them it stays bound to this loop and may be added again,
    /// keeping its fire date. From the loop's thread it does not fire in `mode` once this returns.
    ///
    /// Thread-safety: any thread; from another thread it takes effect before the loop's next turn.
    public func remove(_ timer: RunLoopTimer, forMode mode: RunLoop.Mode) {
        guard timer.detach(from: self, mode: mode) else { return }
        if isCurrentThread { syncTimer(timer); return }
        registerOnOwner { $0.syncTimer(timer) }
    }

    /// Whether `timer` is scheduled in this loop in `mode`, directly or through `.common`
    /// (`CFRunLoopContainsTimer`), with the adds and removes made so far; false once it is invalid.
    ///
    /// Thread-safety: any thread.
    public func contains(_ timer: RunLoopTimer, inMode mode: RunLoop.Mode) -> Bool {
        let (first, more) = timer.modes(in: self)
        guard let first else { return false }
        if first == mode || more.contains(mode) { return true }
        return mode != .common && (first == .common || more.contains(.common)) && commonModes.contains(mode)
    }

    /// Owner: makes the loop's registration of `timer` agree with its modes as they now stand
    /// (added, moved between groups, or unregistered when it is in no mode any more).
    private func syncTimer(_ timer: RunLoopTimer) {
        guard timer.isValid else { return }
        if ownerShutDown { timer.invalidate(); return }
        let (first, more) = timer.modes(in: self)
        guard let first else {
            if timer.group != nil { unregisterTimer(timer) }
            return
        }
        let group = more.isEmpty ? sourceGroup(forMode: first) : sourceGroup(for: ModeSet(more.union([first])))
        if let current = timer.group {
            if current !== group { move(timer, to: group) }
        } else {
            timer.group = group
            timers[ObjectIdentifier(timer)] = timer
            schedule(timer)
        }
    }

    /// Puts registered `timer` in its group's heap, due at its fire date, after every timer
    /// scheduled before it.
    private func schedule(_ timer: RunLoopTimer) {
        let (fireDate, tolerance, version) = timer.schedule
        timer.scheduledVersion = version
        let seconds = fireDate.timeIntervalSinceReferenceDate
        timer.due = seconds >= Date.distantFuture.timeIntervalSinceReferenceDate ? .infinity : seconds
        timer.slack = tolerance
        timer.sequence = nextTimerSequence
        nextTimerSequence &+= 1
        timer.group!.timers.insert(timer)
    }

    private func move(_ timer: RunLoopTimer, to group: SourceGroup) {
        let old = timer.group!
        let wasInHeap = timer.heapIndex >= 0
        old.timers.remove(timer)
        if timer.isFiring {
            old.firingTimers -= 1
            group.firingTimers += 1
        }
        timer.group = group
        // Same due time and sequence: moving between modes keeps its place among equal dates.
        if wasInHeap { group.timers.insert(timer) }
    }

    /// Owner: the timer's fire date was set (``RunLoopTimer/fireDate``): re-schedule it, unless it
    /// is firing (the firing code then re-schedules it when its block returns).
    func timerFireDateChanged(_ timer: RunLoopTimer) {
        guard let group = timer.group, timer.heapIndex >= 0 else { return }
        group.timers.remove(timer)
        schedule(timer)
    }

    func unregisterTimer(_ timer: RunLoopTimer) {
        guard let group = timer.group else { return }
        timers.removeValue(forKey: ObjectIdentifier(timer))
        group.timers.remove(timer)
        setFiring(timer, false)
        timer.group = nil
    }

    private func setFiring(_ timer: RunLoopTimer, _ firing: Bool) {
        guard timer.isFiring != firing, let group = timer.group else { return }
        timer.isFiring = firing
        group.firingTimers += firing ? 1 : -1
    }

    /// The timer of the running mode due first.
    private func earliestTimer() -> RunLoopTimer? {
        guard !timers.isEmpty else { return nil }
        var earliest: RunLoopTimer?
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
    /// the clock read then, and a one-shot timer is invalidated, unless its fire date was set since
    /// it was scheduled (by the block or by another thread), which re-arms it for that date.
    @discardableResult
    func fireDueTimers() -> Bool {
        guard nextTimerDue() != .infinity else { return false }
        var handled = false
        let now = Date().timeIntervalSinceReferenceDate
        let limit = nextTimerSequence
        let ambient = innermostRunHasAmbientContext
        while let timer = earliestTimer(), timer.due <= now, timer.sequence < limit {
            timer.group!.timers.remove(timer)
            guard timer.isValid else { unregisterTimer(timer); continue }
            if timer.fireDateVersion != timer.scheduledVersion {
                // Its date was set (from another thread) since it was scheduled, and that thread's
                // re-arm is still queued: the new date decides, the old one does not fire.
                schedule(timer)
                continue
            }
            if timer.gate.tryEnter() {
                setFiring(timer, true)
                // A timer belongs to the loop, not to a caller: it runs with no `ServiceContext`.
                withCallerContext(nil, ambient: ambient) { timer.block(timer) }
                setFiring(timer, false)
                timer.gate.exit()
                timersFired.increment()
                handled = true
            }
            // Still registered (its block may have invalidated it, or a nested run unregistered it).
            guard timer.group != nil, timer.isValid else { continue }
            // A date set since it was scheduled (by its block, or by another thread while the
            // loop was firing it: that thread's re-arm found it out of the heap) stands.
            if timer.finishFiring() {
                schedule(timer)
            } else {
                unregisterTimer(timer)
            }
        }
        return handled
    }
}
