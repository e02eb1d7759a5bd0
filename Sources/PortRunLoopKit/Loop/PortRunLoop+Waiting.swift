import Foundation

/// How a loop waits between turns: polling libevent while work is queued, spinning while a burst
/// or a conversation is likely to bring more (``IdleSpin``), and parking in `event_base_loop` or on
/// the doorbell otherwise. A run calls ``PortRunLoop/waitForEvents(until:now:)`` after a turn with
/// no runnable work.
extension PortRunLoop {
    /// Waits until work arrives, an fd is ready, or the monotonic time `wake` (the run's deadline
    /// or the mode's next timer, whichever is first).
    ///
    /// With work already in the inbox it does not wait: it only polls libevent, at most every 8th
    /// turn, so fd sources and timers are never starved by a busy queue. Otherwise it spins first
    /// if a burst is in progress (``IdleSpin``), then parks: sets ``Inbox/parked`` under the inbox
    /// lock (after which the first producer rings the ``Doorbell``), and blocks: in
    /// `event_base_loop` with the ``WakeTimer`` armed, or, when the mode has no fd source and there
    /// is no time to wake at, in `read(2)` on the doorbell (``Doorbell/waitForRing()``).
    func waitForEvents(until wake: Double, now: Double) {
        if workHint.pointee.load(ordering: .acquiring) {
            pollOccasionally()
            return
        }
        var idleStart = now
        answerWakeUnearned = false
        if let wake = wakeToAccount {
            wakeToAccount = nil
            idleSpin.slept(gap: wake.gap, inConversation: wake.inConversation, backlog: handledCount &- wake.handledAtWake > 1)
        }
        let allowance = idleSpin.allowance
        if allowance > 0 {
            idleSpins.increment()
            if spinForWork(from: idleStart, for: allowance, until: wake, inConversation: isConversing) { return }
            idleStart = System.monotonicSeconds()
        }
        // `parked` still set from the last sleep, and no producer since (one that took the ring
        // duty would have raised the hint, and the collect that lowered it refreshed
        // `parkedFlagLeftSet`): sleep again without touching the inbox. The loop of a server that
        // only serves fds and timers takes no lock per event.
        if !parkedFlagLeftSet {
            let mayBlock = inbox.withLock { inbox -> Bool in
                if inbox.hasWork { return false }
                inbox.parked = true
                inbox.rangAt = nil
                return true
            }
            guard mayBlock else {
                pollOccasionally()
                return
            }
        }
        iterationsSincePoll = 0
        sleeps.increment()
        parkedAt = idleStart
        sleeping.store(true, ordering: .relaxed)
        if wake == .infinity && runningModeFileDescriptorCount() == 0 {
            // Nothing but a ring can end this wait: sleep on the doorbell itself (see ``Doorbell``).
            doorbell.waitForRing()
        } else {
            if wakeTimer.arm(for: wake, now: idleStart) { wakeTimerSets.increment() }
            pollLibEvent(blocking: true)
        }
        sleeping.store(false, ordering: .relaxed)
        guard workHint.pointee.load(ordering: .acquiring) else {
            // Woken by an fd or a timer, not by a producer: `parked` may stay set until one comes
            // (it then rings once although the loop is awake, which only makes a later wait
            // return at once). In a conversation an fd that came soon is the answer (a reply read
            // from a socket): it earns the spin as a ring would, and spends the mark. One that came
            // later may still earn when a library connection reads it (``noteAnswer(after:)``).
            // Outside a conversation an fd earns by the backlog its wake-up finds; a timer earns
            // nothing.
            parkedFlagLeftSet = true
            if isConversing, !readyFileDescriptors.isEmpty {
                if idleSpin.slept(gap: System.monotonicSeconds() - idleStart, inConversation: true, backlog: false) {
                    inConversation = false
                } else {
                    answerWakeUnearned = true
                }
            } else if !readyFileDescriptors.isEmpty {
                // Accounted as a ring's wake-up is, when the loop next runs dry and its backlog is
                // known (a stream of frames from another process arriving faster than it wakes).
                wakeToAccount = (.infinity, false, handledCount)
            }
            parkedAt = nil
            return
        }
        // Woken by a producer, which cleared `parked` when it took the duty to ring. The next
        // turn's collect refreshes `parkedFlagLeftSet` and accounts for the wake-up (`parkedAt`).
    }

    /// How many fd sources the running mode has: a sum over its few source groups, not a walk over
    /// the sources. With any, a wait must be in libevent, which reports their readiness.
    func runningModeFileDescriptorCount() -> Int {
        activeGroups.reduce(0) { $0 + $1.fileDescriptors }
    }

    /// Runs libevent once (``EventBase/runOnce(blocking:)``): its callbacks queue the ready fds;
    /// with `blocking`, it first waits for one, or for the ``WakeTimer`` or the ``Doorbell``. Every
    /// look at the fds goes through here, which is what ``spinReadsSincePoll`` counts from.
    func pollLibEvent(blocking: Bool) {
        spinReadsSincePoll = 0
        base.runOnce(blocking: blocking)
    }

    /// Polls libevent without blocking on every 8th call (the inbox has work: no sleep), when the
    /// running mode has fd sources: they are all it has to report here (timers fire from the
    /// loop's own heap each turn, and a ring needs no look while the loop is awake).
    private func pollOccasionally() {
        iterationsSincePoll += 1
        if iterationsSincePoll >= 8 {
            iterationsSincePoll = 0
            if runningModeFileDescriptorCount() > 0 { pollLibEvent(blocking: false) }
        }
    }

    /// Spins for up to `allowance` seconds (never past `wake`) for work to arrive, giving the CPU
    /// away (`sched_yield`) between checks and, when the running mode has fd sources, looking at
    /// them every ``IdleSpin/pollInterval`` (the conversation's socket, or libevent). True when
    /// there is something to do: work arrived (or a stop or wake request), an fd became ready, or
    /// `wake` came. Pays for the spin in ``idleSpin``.
    ///
    /// Yielding, rather than busy-waiting, lets a producer that shares the CPU run meanwhile.
    /// ``workHint`` is read without the inbox lock: a stale answer only means one more turn, or a
    /// park that the lock-held check in ``waitForEvents(until:now:)`` then refuses.
    private func spinForWork(from start: Double, for allowance: Double, until wake: Double, inConversation: Bool) -> Bool {
        let end = min(start + allowance, wake)
        var nextPoll = start + IdleSpin.pollInterval
        while true {
            sched_yield()
            let now = System.monotonicSeconds()
            if workHint.pointee.load(ordering: .acquiring) {
                spinFound(after: now - start, inConversation: inConversation)
                return true
            }
            if now >= wake || now >= end {
                idleSpin.spun(for: now - start, found: false, inConversation: inConversation)
                return now >= wake
            }
            if now >= nextPoll {
                // In a conversation the answer is most likely on the conversation's socket: it is
                // read directly, rather than libevent asked and then the socket read.
                switch inConversation ? readConversationSocket() : .notNow {
                case .read:
                    spinFound(after: now - start, inConversation: true)
                    return true
                case .empty:
                    break
                case .notNow:
                    // Only fd sources are news from libevent here: the spin itself watches for
                    // work and for `wake` (timers). A mode with none, such as an actor's loop
                    // between jobs, is spared the `epoll_wait`.
                    guard runningModeFileDescriptorCount() > 0 else { break }
                    pollLibEvent(blocking: false)
                    if !readyFileDescriptors.isEmpty {
                        spinFound(after: now - start, inConversation: inConversation)
                        return true
                    }
                }
                nextPoll = now + IdleSpin.pollInterval
            }
        }
    }

    /// A library connection read, on this loop's thread, a frame of its peer answering this side's
    /// last frame: `gap` is how soon the exchange turns around with both sides awake (the longer
    /// of the two sides' answer times, ``AnswerTiming``). When the loop's last sleep ended with
    /// that readiness and earned nothing because the answer waited for the partner's wake-up, it
    /// earns by this gap instead, and spends the conversation mark: so an exchange whose two sides
    /// both answer within ``IdleSpin/limit`` starts spinning although each side's answers arrive
    /// after the other's wake-up. Once per sleep; a spin that found the answer has earned already.
    func noteAnswer(after gap: Double) {
        guard answerWakeUnearned else { return }
        answerWakeUnearned = false
        if idleSpin.slept(gap: gap, inConversation: true, backlog: false) { inConversation = false }
    }

    /// A spin found work after `seconds`: pays for it, and unless in a conversation leaves the
    /// earning to the backlog found (accounted for when the loop next runs dry).
    private func spinFound(after seconds: Double, inConversation: Bool) {
        idleSpin.spun(for: seconds, found: true, inConversation: inConversation)
        if !inConversation { wakeToAccount = (0, false, handledCount) }
    }
}
