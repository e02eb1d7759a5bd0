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

    /// Runs `mode` once: returns after the first batch of sources was handled, or at `date`.
    /// Returns false at once, without waiting, when the mode has nothing scheduled in it
    /// (Foundation's `run(mode:before:)`).
    ///
    /// Thread-safety: the loop's own thread only (precondition).
    @discardableResult
    public func run(mode: RunLoop.Mode, before date: Date) -> Bool {
        preconditionOnLoopThread("PortRunLoop.run(mode:before:)")
        let deadline = Self.checkedDeadline(date, "PortRunLoop.run(mode:before:)")
        return runSpecific(mode: mode, deadline: deadline, returnAfterSourceHandled: true) != .finished
    }

    /// Runs `mode` for at most `timeout` seconds (CFRunLoopRunInMode). With
    /// `returnAfterSourceHandled` it returns after the first batch of handled sources.
    ///
    /// Thread-safety: the loop's own thread only (precondition).
    @discardableResult
    public func run(mode: RunLoop.Mode, timeout: TimeInterval, returnAfterSourceHandled: Bool) -> RunLoopRunResult {
        preconditionOnLoopThread("PortRunLoop.run(mode:timeout:returnAfterSourceHandled:)")
        precondition(!timeout.isNaN, "PortRunLoop.run(mode:timeout:returnAfterSourceHandled:): timeout is NaN")
        let deadline = timeout >= 100 * 365 * 86_400 ? .infinity : System.monotonicSeconds() + max(timeout, 0)
        return runSpecific(mode: mode, deadline: deadline, returnAfterSourceHandled: returnAfterSourceHandled)
    }

    /// Ends the innermost run in progress, from any thread (CFRunLoopStop). A no-op when the loop is
    /// not running at the moment of the call: it does not carry over to a later run.
    ///
    /// Thread-safety: any thread.
    public func stop() {
        if isCurrentThread {
            if !frames.isEmpty { frames[frames.count - 1].stopped = true }
            return
        }
        let ring = inbox.withLock { inbox -> Bool in
            guard inbox.runDepth > 0 else { return false }
            inbox.stopRequested = true
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
        wakeSignals.increment()
        doorbell.activate()
    }

    static func checkedDeadline(_ date: Date, _ caller: String) -> Double {
        precondition(!date.timeIntervalSinceReferenceDate.isNaN, "\(caller): the date is NaN")
        return date.monotonicDeadline
    }

    // MARK: - The run itself

    /// The one run implementation every public run method and synchronous wait goes through.
    /// `until`, when given, ends the run (`.handledSource`) as soon as it returns true; such runs
    /// never report `.finished`.
    func runSpecific(mode: RunLoop.Mode, deadline: Double, returnAfterSourceHandled: Bool,
                     until condition: (() -> Bool)? = nil) -> RunLoopRunResult {
        if condition == nil, modeIsEmpty(mode) { return .finished }
        if inbox.withLock({ $0.isShutDown }) { return .finished }
        let previousMode = armedMode
        frames.append(RunFrame(mode: mode))
        inbox.withLock { $0.runDepth += 1 }
        arm(mode)
        defer {
            frames.removeLast()
            inbox.withLock {
                $0.runDepth -= 1
                if $0.runDepth == 0 { $0.stopRequested = false }
            }
            if let previousMode { arm(previousMode) } else { disarmAll() }
        }
        // A run whose deadline has passed (a polling run: timeout 0, a past date) still asks
        // libevent once, without blocking, so due timers and ready fds are handled as in CFRunLoop.
        var polledAfterDeadline = false
        while true {
            collectInbox()
            if let condition, condition() { return .handledSource }
            if frames[frames.count - 1].stopped { return .stopped }
            var handled = runQueuedWork(mode: mode)
            handled = deliverPendingPorts(mode: mode) || handled
            handled = fireDueTimers(mode: mode) || handled
            handled = handleReadyFileDescriptors(mode: mode) || handled
            if frames[frames.count - 1].stopped { return .stopped }
            if let condition, condition() { return .handledSource }
            if handled && returnAfterSourceHandled { return .handledSource }
            if condition == nil, modeIsEmpty(mode) { return .finished }
            if System.monotonicSeconds() >= deadline {
                if polledAfterDeadline { return .timedOut }
                polledAfterDeadline = true
                base.runOnce(blocking: false)
                continue
            }
            // A nested run may have collected work or ports this turn's budget did not cover:
            // never sleep on something runnable (take another turn instead).
            if nextRunnableWorkIndex(mode: mode) != nil || hasDeliverablePendingPort(mode: mode) { continue }
            if !beforeWaitingObservers.isEmpty, notifyBeforeWaiting(mode: mode) { continue }
            waitForEvents(deadline: deadline)
        }
    }

    /// Moves everything producers queued into owner-side structures and applies a stop request
    /// to the innermost run (neither is a handled source).
    private func collectInbox() {
        let stop = inbox.withLock { inbox -> Bool in
            workHint.pointee.store(false, ordering: .relaxed)
            if !inbox.work.isEmpty {
                if localWork.isEmpty {
                    // The usual case: take the whole batch by swapping buffers (no per-item copy,
                    // retain and release; both keep their capacity).
                    swap(&localWork, &inbox.work)
                } else {
                    localWork.append(contentsOf: inbox.work)
                    inbox.work.removeAll(keepingCapacity: true)
                }
            }
            inbox.wakePending = false
            defer { inbox.stopRequested = false }
            return inbox.stopRequested
        }
        if stop { frames[frames.count - 1].stopped = true }
    }

    /// Sleeps in libevent until a source fires, the doorbell rings, or the deadline — unless the
    /// inbox already has work, in which case it only polls libevent (at most every 8th turn, so
    /// fd sources and timers are never starved by a busy queue).
    ///
    /// Before it parks it spins briefly (``spinBeforeParking``; see ``workArrivedWhileSpinning(deadline:)``).
    private func waitForEvents(deadline: Double) {
        if workArrivedWhileSpinning(deadline: deadline) {
            iterationsSincePoll += 1
            if iterationsSincePoll >= 8 {
                iterationsSincePoll = 0
                base.runOnce(blocking: false)
            }
            return
        }
        let mayBlock = inbox.withLock { inbox -> Bool in
            if inbox.hasWork { return false }
            inbox.parked = true
            return true
        }
        if !mayBlock {
            iterationsSincePoll += 1
            if iterationsSincePoll >= 8 {
                iterationsSincePoll = 0
                base.runOnce(blocking: false)
            }
            return
        }
        iterationsSincePoll = 0
        sleeps.increment()
        if deadline != .infinity {
            try? deadlineEvent.add(timeoutSeconds: deadline - System.monotonicSeconds())
        }
        base.runOnce(blocking: true)
        deadlineEvent.remove()
        inbox.withLock { $0.parked = false }
    }

    /// How long an owner whose inbox ran dry keeps checking it before it parks: 20 µs.
    static let spinBeforeParking = 20e-6

    /// Hot path (see Docs/Benchmarks.md): waits up to ``spinBeforeParking`` (never past `deadline`)
    /// for the inbox to fill again, giving the CPU away (`sched_yield`) between checks. True when
    /// work (or a stop or wake request) arrived meanwhile.
    ///
    /// A producer that is streaming refills the inbox within microseconds, far sooner than a
    /// parked thread wakes up (5–50 µs on a VM): the owner goes on without parking, so the producer
    /// rings no doorbell and nobody pays a context switch. Yielding, rather than busy-waiting,
    /// lets a producer that shares the CPU (a pinned process) run meanwhile. The cost is at most
    /// 20 µs of CPU each time the loop goes idle. Timers and fd sources are not polled while
    /// spinning, so they may be handled up to 20 µs late.
    private func workArrivedWhileSpinning(deadline: Double) -> Bool {
        if workHint.pointee.load(ordering: .acquiring) { return true }
        let end = min(System.monotonicSeconds() + Self.spinBeforeParking, deadline)
        while System.monotonicSeconds() < end {
            sched_yield()
            // Read without the inbox lock (see `workHint`): a stale answer only means one more
            // turn, or a park that the lock-held check in `waitForEvents` then refuses.
            if workHint.pointee.load(ordering: .acquiring) { return true }
        }
        return false
    }

    /// True when `mode` has no port, timer or fd source scheduled and no work is queued for it
    /// (work just arrived in the inbox counts: it may be the control work that adds a source).
    func modeIsEmpty(_ mode: RunLoop.Mode) -> Bool {
        let common = ownerCommonModes
        if ports.values.contains(where: { $0.modes.contains(mode, commonModes: common) }) { return false }
        if timers.values.contains(where: { $0.modes.contains(mode, commonModes: common) }) { return false }
        if fdSources.values.contains(where: { $0.modes.contains(mode, commonModes: common) }) { return false }
        if localWork.contains(where: { $0.matches(mode, commonModes: common) }) { return false }
        return inbox.withLock { $0.work.isEmpty }
    }
}
