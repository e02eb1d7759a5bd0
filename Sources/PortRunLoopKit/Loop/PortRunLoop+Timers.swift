import Foundation

/// A timer scheduled in a loop: its libevent timer event and its modes. Owner thread only.
final class TimerRegistration: LibEventReceiver {
    let timer: RunLoopTimer
    var modes: ModeSet
    private unowned let loop: PortRunLoop
    private var event: LoopEvent?
    var isQueuedToFire = false
    /// True while the timer's block runs: a nested run started by the block must not fire the
    /// same timer again (a one-shot would fire twice; CF has the same "firing" guard).
    var isFiring = false

    init(timer: RunLoopTimer, modes: ModeSet, loop: PortRunLoop) throws(PortRunLoopError) {
        self.timer = timer
        self.modes = modes
        self.loop = loop
        super.init()
        self.event = try LoopEvent(base: loop.base, flags: [], receiver: self)
    }

    /// libevent callback (inside `event_base_loop`): only records the fire.
    override func eventFired(_ flags: EventFlags) {
        guard !isQueuedToFire else { return }
        isQueuedToFire = true
        loop.firedTimers.append(self)
    }

    /// Arms the libevent timer for the fire date, or disarms it.
    func setArmed(_ armed: Bool) {
        guard let event else { return }
        if armed {
            let delay = timer.fireDate.timeIntervalSinceNow
            if delay > 100 * 365 * 86_400 { event.remove(); return } // effectively never
            try? event.add(timeoutSeconds: delay)
        } else {
            event.remove()
        }
    }

    /// Frees the libevent event (owner thread) and breaks the cycle with the receiver.
    func detach() {
        event?.remove()
        event = nil
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
        let id = ObjectIdentifier(timer)
        let registration: TimerRegistration
        if let existing = timers[id] {
            registration = existing
            registration.modes = registration.modes.inserting(mode)
        } else {
            do {
                registration = try TimerRegistration(timer: timer, modes: ModeSet([mode]), loop: self)
            } catch {
                timer.invalidate()
                return
            }
            timers[id] = registration
        }
        if let armed = armedMode {
            registration.setArmed(registration.modes.contains(armed, commonModes: ownerCommonModes))
        }
    }

    func unregisterTimer(_ timer: RunLoopTimer) {
        guard let registration = timers.removeValue(forKey: ObjectIdentifier(timer)) else { return }
        registration.detach()
        firedTimers.removeAll { $0 === registration }
    }

    /// Fires the timers libevent reported, if they belong to `mode` and their date has come.
    func fireDueTimers(mode: RunLoop.Mode) -> Bool {
        var handled = false
        var index = 0
        while index < firedTimers.count {
            let registration = firedTimers[index]
            let timer = registration.timer
            // A timer libevent reported while a nested run of another mode was polling stays
            // queued for a run of its own modes (dropping it would delay it until the mode is
            // next armed, past the run that should have fired it).
            if timers[ObjectIdentifier(timer)] === registration, timer.isValid,
               registration.isFiring || !registration.modes.contains(mode, commonModes: ownerCommonModes) {
                index += 1
                continue
            }
            firedTimers.remove(at: index)
            registration.isQueuedToFire = false
            guard timers[ObjectIdentifier(timer)] === registration else { continue }
            guard timer.isValid else { unregisterTimer(timer); continue }
            // The block may run nested runs that change the list: start over after each fire.
            index = 0
            let now = Date()
            if now < timer.fireDate {
                // libevent's monotonic clock and the wall clock disagree by a hair: never early.
                registration.setArmed(true)
                continue
            }
            if timer.repeats {
                timer.advance(after: now)
                registration.setArmed(true)
            }
            if timer.gate.tryEnter() {
                registration.isFiring = true
                timer.block(timer)
                registration.isFiring = false
                timer.gate.exit()
                timersFired.increment()
                handled = true
            }
            if !timer.repeats { timer.invalidate() }
        }
        return handled
    }

    /// Makes libevent watch exactly the timers and fd sources of `mode`.
    func arm(_ mode: RunLoop.Mode, force: Bool = false) {
        guard force || armedMode != mode else { return }
        armedMode = mode
        let common = ownerCommonModes
        for registration in timers.values { registration.setArmed(registration.modes.contains(mode, commonModes: common)) }
        for registration in fdSources.values { registration.setArmed(registration.modes.contains(mode, commonModes: common)) }
    }

    func disarmAll() {
        armedMode = nil
        for registration in timers.values { registration.setArmed(false) }
        for registration in fdSources.values { registration.setArmed(false) }
    }
}
