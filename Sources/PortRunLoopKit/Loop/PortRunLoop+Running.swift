import Foundation

extension PortRunLoop {
    /// Runs the default mode until ``stop()`` is called or the mode has no ports, fd sources, timers
    /// or queued work left (Foundation's `run()`, except that ``stop()`` works on it).
    ///
    /// Thread-safety: the loop's own thread only (precondition).
    public func run() {
        preconditionOnLoopThread("PortRunLoop.run()")
        while true {
            switch runSpecific(mode: .default, deadline: .infinity, returnAfterSourceHandled: false) {
            case .stopped, .finished: return
            case .timedOut, .handledSource: continue
            }
        }
    }

    /// Runs the default mode until `date`, ``stop()``, or the mode running dry.
    ///
    /// Thread-safety: the loop's own thread only (precondition).
    public func run(until date: Date) {
        preconditionOnLoopThread("PortRunLoop.run(until:)")
        let deadline = Self.checkedDeadline(date, "PortRunLoop.run(until:)")
        while true {
            switch runSpecific(mode: .default, deadline: deadline, returnAfterSourceHandled: false) {
            case .stopped, .finished, .timedOut: return
            case .handledSource: continue
            }
        }
    }

    /// Runs `mode` once: returns after the first turn that handled a source (a port's messages,
    /// an fd source, a custom source, queued `perform` work; not a timer: R3), at `date`, or when
    /// the mode runs dry. Returns false at once, without waiting, when the mode has nothing
    /// scheduled in it when called, and true otherwise (Foundation's `run(mode:before:)`).
    ///
    /// Thread-safety: the loop's own thread only (precondition).
    @discardableResult
    public func run(mode: RunLoop.Mode, before date: Date) -> Bool {
        preconditionOnLoopThread("PortRunLoop.run(mode:before:)")
        let deadline = Self.checkedDeadline(date, "PortRunLoop.run(mode:before:)")
        let before = handlingCount
        switch runIfNotEmpty(mode: mode, deadline: deadline, returnAfterSourceHandled: true) {
        case nil: return false
        // Work waiting in the inbox makes a mode count as not empty until it is collected (it may
        // add a source); a run that then found nothing of its mode is one of an empty mode.
        case .finished?: return handlingCount != before
        case _?: return true
        }
    }

    /// Everything the loop has handled or fired so far, of every kind.
    private var handlingCount: Int {
        performsRun.value &+ messagesDelivered.value &+ timersFired.value &+ sourcesPerformed.value &+ fdEventsHandled.value
    }

    /// Runs `mode` for at most `timeout` seconds (CFRunLoopRunInMode). With
    /// `returnAfterSourceHandled` it returns after the first turn that handled a source (a port's
    /// messages, an fd source, a custom source, queued `perform` work); timers fire without
    /// ending it (R3).
    ///
    /// Thread-safety: the loop's own thread only (precondition).
    @discardableResult
    public func run(mode: RunLoop.Mode, timeout: TimeInterval, returnAfterSourceHandled: Bool) -> RunLoopRunResult {
        preconditionOnLoopThread("PortRunLoop.run(mode:timeout:returnAfterSourceHandled:)")
        Misuse.check(!timeout.isNaN, "PortRunLoop.run(mode:timeout:returnAfterSourceHandled:): timeout is NaN")
        let deadline = timeout >= 100 * 365 * 86_400 ? .infinity : System.monotonicSeconds() + max(timeout, 0)
        return runSpecific(mode: mode, deadline: deadline, returnAfterSourceHandled: returnAfterSourceHandled)
    }

    /// Ends the innermost run in progress, from any thread (CFRunLoopStop). A no-op when the loop is
    /// not running at the moment of the call: it does not carry over to a later run.
    ///
    /// Thread-safety: any thread.
    public func stop() {
        if isCurrentThread {
            stopInnermostUserRun()
            return
        }
        let ring = inbox.withLock { inbox -> Bool in
            // Addressed to the run in progress now, by its epoch: if that run has ended by the
            // time the loop collects the request, a later run does not take it (R6).
            let epoch = runningEpoch.load(ordering: .acquiring)
            guard epoch != 0 else { return false }
            inbox.stopRequestEpoch = epoch
            return workArrivedLocked(&inbox)
        }
        if ring { ringDoorbell() }
    }

    /// Wakes the loop if it is sleeping, so that it re-examines its sources (CFRunLoopWakeUp). A
    /// wake-up sent while it is busy makes its next wait return at once.
    ///
    /// Thread-safety: any thread.
    public func wakeUp() {
        let ring = inbox.withLock { inbox -> Bool in
            // A wake-up from another loop's thread is a hand-off (a ``RunLoopSource`` signalled
            // before it): that loop is in a conversation with this one, as with a `perform`
            // (``enqueueDeferringDoorbell(_:)``).
            if !workHint.pointee.load(ordering: .relaxed), let sender = ThreadLocals.loop, sender !== self {
                sender.inConversation = true
            }
            inbox.wakePending = true
            return workArrivedLocked(&inbox)
        }
        if ring { ringDoorbell() }
    }

    /// The mode of the innermost run in progress, or nil when the loop is not running
    /// (`RunLoop.currentMode`).
    ///
    /// Thread-safety: the loop's own thread only (precondition).
    public var currentMode: RunLoop.Mode? {
        preconditionOnLoopThread("PortRunLoop.currentMode")
        return frames.last?.mode
    }

    @inline(__always) func ringDoorbell() {
        // The ring first: the loop's wake-up starts there, and counting before it would put an
        // atomic add on a line of the loop (cold after an idle spell) in front of it.
        Doorbell.ring(doorbellDescriptor)
        wakeSignals.increment()
        // Only a producer that finds the loop asleep gets here, so this costs a burst nothing.
        Self.noteMessageSentFromCurrentThread()
    }

    static func checkedDeadline(_ date: Date, _ caller: String) -> Double {
        Misuse.check(!date.timeIntervalSinceReferenceDate.isNaN, "\(caller): the date is NaN")
        return date.monotonicDeadline
    }

    // MARK: - The run itself

    /// The one run implementation every public run method and synchronous wait goes through.
    /// `until`, when given, ends the run (`.handledSource`) as soon as it returns true; such runs
    /// never report `.finished`.
    ///
    /// Entering and leaving a run touches no libevent registration (fd sources stay armed across
    /// runs; see ``FileDescriptorRegistration``); it works out which source groups belong to the
    /// mode, which costs a few operations per group, not per source.
    func runSpecific(mode: RunLoop.Mode, deadline: Double, returnAfterSourceHandled: Bool,
                     until condition: (() -> Bool)? = nil) -> RunLoopRunResult {
        runIfNotEmpty(mode: mode, deadline: deadline, returnAfterSourceHandled: returnAfterSourceHandled,
                      until: condition) ?? .finished
    }

    /// ``runSpecific(mode:deadline:returnAfterSourceHandled:until:)``, answering nil instead of
    /// ``RunLoopRunResult/finished`` when the mode is empty (or the loop shut down) before the run
    /// begins, which is when ``run(mode:before:)`` answers false (a run that finds its mode
    /// emptied later still answers true there, as in corelibs).
    @inline(__always)
    func runIfNotEmpty(mode: RunLoop.Mode, deadline: Double, returnAfterSourceHandled: Bool,
                       until condition: (() -> Bool)? = nil) -> RunLoopRunResult? {
        let groups = sourceGroups(in: mode)
        if condition == nil, modeIsEmpty(mode, groups: groups) { return nil }
        // Shutdown happens on this thread: its own flag says, without the inbox lock. Nor does
        // entering or leaving take the lock: an outermost run publishes its epoch (what `stop()`
        // from another thread addresses), and leaving it publishes 0 (see ``runningEpoch``).
        guard !ownerShutDown else { return nil }
        if frames.isEmpty {
            runEpoch &+= 1
            runningEpoch.store(runEpoch, ordering: .releasing)
        }
        frames.append(RunFrame(mode: mode, isPrivate: condition != nil, hasAmbientContext: CallerContext.isSet))
        activateInnermostFrame()
        defer {
            frames.removeLast()
            if frames.isEmpty { runningEpoch.store(0, ordering: .releasing) }
            activateInnermostFrame()
        }
        // With observers, a stop already sent returns before any of them is called (O2); then the
        // run reports its entry, and its exit while it is still the innermost run.
        if !runObservers.isEmpty {
            collectInbox()
            if frames[frames.count - 1].stopped { return .stopped }
            notifyObservers(.entry, mode: mode)
        }
        let result = runPasses(mode: mode, deadline: deadline, returnAfterSourceHandled: returnAfterSourceHandled, until: condition)
        if !runObservers.isEmpty { notifyObservers(.exit, mode: mode) }
        return result
    }

    /// The passes of a run (``runSpecific(mode:deadline:returnAfterSourceHandled:until:)``), with its
    /// frame pushed. With observers, each pass reports where CFRunLoop's `__CFRunLoopRun` does: before
    /// timers and sources, except on the pass that handles what ended a wait (CFRunLoop handles it
    /// in the same iteration as the wait, after `afterWaiting`), and around each wait.
    @inline(__always)
    private func runPasses(mode: RunLoop.Mode, deadline: Double, returnAfterSourceHandled: Bool,
                           until condition: (() -> Bool)?) -> RunLoopRunResult {
        // A run whose deadline has passed (a polling run: timeout 0, a past date) still asks
        // libevent once, without blocking, so due timers and ready fds are handled as in CFRunLoop.
        var polledAfterDeadline = false
        var slept = 0.0 // the last wait, for the next turn's report
        // The pass after a wait (or after the deadline's last poll) handles what ended it without
        // reporting `beforeTimers`/`beforeSources` again; if the run goes on, the loop goes round
        // once more to report them before the next wait (O5).
        var handlesWake = false
        while true {
            // With a metrics delegate, each pass is a turn, reported when its handling is done:
            // before it waits, or when the run returns or goes round again without waiting.
            // Started after collecting, which installs a delegate set from another thread: the
            // turn that runs work queued together with it is reported.
            collectInbox()
            var turn = ownerMetricsDelegate == nil ? nil : TurnStart(of: self, sleptBefore: slept)
            slept = 0
            defer { if let turn { reportTurn(from: turn, mode: mode) } }
            if let condition, condition() { return .handledSource }
            if frames[frames.count - 1].stopped { return .stopped }
            let observed = !runObservers.isEmpty
            if observed && !handlesWake {
                notifyObservers(.beforeTimers, mode: mode)
                notifyObservers(.beforeSources, mode: mode)
            }
            // Each kind of source is looked at only when it has something to look at: a turn for
            // one hand-off then runs none of the others' code, and after an idle spell every
            // function of its own is a page of code to fetch (see Architecture, "Threads and
            // ownership"). The tests are the ones each function starts with.
            var handled = localWork.isEmpty ? false : runQueuedWork(mode: mode)
            if !customSources.isEmpty, !(handled && returnAfterSourceHandled) {
                handled = performSignalledSources(stopAfterFirst: returnAfterSourceHandled && condition == nil) || handled
            }
            if !pendingPorts.isEmpty || !portsInDelivery.isEmpty { handled = deliverPendingPorts(mode: mode) || handled }
            // Timers never count as a handled source (R3): CFRunLoop's `__CFRunLoopDoTimers` does
            // not set `sourceHandledThisLoop`.
            if !timers.isEmpty { fireDueTimers() }
            if !readyFileDescriptors.isEmpty { handled = handleReadyFileDescriptors() || handled }
            if frames[frames.count - 1].stopped { return .stopped }
            if let condition, condition() { return .handledSource }
            if handled && returnAfterSourceHandled { return .handledSource }
            if condition == nil, innermostModeIsEmpty() { return .finished }
            let now = System.monotonicSeconds()
            if now >= deadline {
                if polledAfterDeadline { return .timedOut }
                polledAfterDeadline = true
                pollLibEvent(blocking: false)
                handlesWake = observed
                continue
            }
            if handlesWake {
                handlesWake = false
                continue
            }
            // A nested run may have collected work, ports or readiness this turn's budget did not
            // cover, and a handler may have scheduled a timer that is already due: never sleep on
            // something runnable (take another turn instead).
            if !readyFileDescriptors.isEmpty || (!localWork.isEmpty && nextRunnableWorkIndex(mode: mode) != nil)
                || (!pendingPorts.isEmpty && hasDeliverablePendingPort(mode: mode))
                || (!customSources.isEmpty && hasSignalledSource()) { continue }
            // Observers and the turn's report run user code: the time is read again after them.
            let userCodeRuns = !beforeWaitingObservers.isEmpty || turn != nil || observed
            if !beforeWaitingObservers.isEmpty, notifyBeforeWaiting(mode: mode) { continue }
            if let started = turn {
                reportTurn(from: started, mode: mode)
                turn = nil
            }
            // `beforeWaiting` is always followed by `afterWaiting` (O5), even when what the
            // observers did (or a timer that came due meanwhile) makes the wait return at once.
            if observed { notifyObservers(.beforeWaiting, mode: mode) }
            let waitFrom = userCodeRuns ? System.monotonicSeconds() : now
            // After the observers and the turn's report, with the time read after them: either
            // may have scheduled a timer or moved one's date, on this thread, which rings nothing.
            var wake = deadline
            let timerWake = timers.isEmpty ? .infinity : nextTimerWake()
            if timerWake != .infinity {
                // Timer dates are wall-clock dates; the wait is on the monotonic clock.
                let wallNow = Date().timeIntervalSinceReferenceDate
                if nextTimerDue() <= wallNow {
                    if observed { wokeUp(mode: mode, handlesWake: &handlesWake) }
                    continue
                }
                wake = min(wake, waitFrom + (timerWake - wallNow))
            }
            waitForEvents(until: wake, now: waitFrom)
            if observed { wokeUp(mode: mode, handlesWake: &handlesWake) }
            if ownerMetricsDelegate != nil { slept = System.monotonicSeconds() - waitFrom }
        }
    }

    /// After a wait, with observers: reports `afterWaiting` and makes the next pass the one that
    /// handles what ended the wait.
    private func wokeUp(mode: RunLoop.Mode, handlesWake: inout Bool) {
        if !runObservers.isEmpty { notifyObservers(.afterWaiting, mode: mode) }
        handlesWake = true
    }

    /// Moves everything producers queued into owner-side structures and applies a stop request
    /// to the innermost run (neither is a handled source).
    private func collectInbox() {
        // Producers raise the hint, with the inbox locked, whenever they add work or a wake or stop
        // request: lowered, there is nothing to collect (one that arrives after this load is
        // collected next turn; the loop never parks without looking under the lock).
        guard workHint.pointee.load(ordering: .acquiring) else { return }
        var rangAt: Double?
        let stop = inbox.withLock { inbox -> Bool in
            workHint.pointee.store(false, ordering: .relaxed)
            // Usually `localWork` is empty and this swaps the two buffers: no per-item copy,
            // retain or release, and both keep their capacity.
            localWork.append(movingContentsOf: &inbox.work)
            inbox.wakePending = false
            parkedFlagLeftSet = inbox.parked
            rangAt = inbox.rangAt
            inbox.rangAt = nil
            if inbox.metricsDelegateChanged {
                inbox.metricsDelegateChanged = false
                ownerMetricsDelegate = inbox.metricsDelegate
            }
            if inbox.loggerChanged {
                inbox.loggerChanged = false
                ownerLogger = inbox.logger
            }
            defer { inbox.stopRequestEpoch = 0 }
            return inbox.stopRequestEpoch != 0 && inbox.stopRequestEpoch == runEpoch
        }
        if stop { stopInnermostUserRun() }
        // The first collect after a sleep a producer ended: the ring's time is read here, under
        // the lock this takes anyway, rather than with a lock of its own on waking. The wake-up is
        // accounted for when the loop next runs dry, when its backlog is known.
        if let parked = parkedAt {
            parkedAt = nil
            if let rangAt { idleSpin.wokeUp(after: System.monotonicSeconds() - rangAt) }
            wakeToAccount = (rangAt.map { $0 - parked } ?? .infinity, isConversing, handledCount)
            inConversation = false // what was sent has bought its one park's worth
        }
    }

    /// Marks the innermost run made by the loop's user as stopped. The library's own waits (a
    /// `performAndWait` or `postAndWait` made on this thread, which run the private
    /// `.synchronousWait` mode) are not the run a `stop()` is meant for: they go on until their call
    /// completes, and the run they were made from then ends. With no user run in progress the
    /// stop is dropped (R6).
    func stopInnermostUserRun() {
        guard let index = frames.lastIndex(where: { !$0.isPrivate }) else { return }
        frames[index].stopped = true
    }
}
