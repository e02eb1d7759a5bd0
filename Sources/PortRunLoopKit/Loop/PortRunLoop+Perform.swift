import Foundation

extension PortRunLoop {
    /// Queues `block` to run on the loop's thread during a run in one of `modes` (``perform(_:)``
    /// queues for the common modes) and wakes the loop if it sleeps. Blocks from one thread run in the order they
    /// were queued. Unlike corelibs' `RunLoop.perform`, this wakes a sleeping loop.
    ///
    /// - Returns: false when the loop is shut down (the block will never run).
    ///
    /// Thread-safety: any thread, including the loop's own (the block then runs on a later turn).
    @discardableResult
    public func perform(inModes modes: [RunLoop.Mode], _ block: consuming @escaping @Sendable () -> Void) -> Bool {
        Misuse.check(!modes.isEmpty, "PortRunLoop.perform(inModes:): the mode list is empty, so the block could never run")
        let set: ModeSet = modes.count == 1 && modes[0] == .common ? .common : ModeSet(modes)
        return enqueue(QueuedWork(modes: set, kind: .block(block), context: CallerContext.capture()))
    }

    /// Queues `block` to run on the loop's thread in the common modes: ``perform(inModes:_:)`` with
    /// `[.common]`, on a shorter path (no mode list is built or compared per call). The block is
    /// taken `consuming`: the caller's reference moves into the queue, with no retain and release.
    ///
    /// - Returns: false when the loop is shut down (the block will never run).
    ///
    /// Thread-safety: any thread, including the loop's own (the block then runs on a later turn).
    @discardableResult
    public func perform(_ block: consuming @escaping @Sendable () -> Void) -> Bool {
        enqueue(QueuedWork(modes: .common, kind: .block(consume block), context: CallerContext.capture()))
    }

    /// Appends to the inbox and rings the doorbell if the owner is parked. The hot path of
    /// `perform`: one lock, no allocation beyond the caller's closure, at most one signal per sleep.
    /// Inlined, as is ``enqueueDeferringDoorbell(_:)``: a producer that finds the loop asleep runs
    /// all of it cold, and each function of its own is one more page of code to fetch.
    @inline(__always) @discardableResult
    func enqueue(_ work: consuming QueuedWork) -> Bool {
        let (accepted, ring) = enqueueDeferringDoorbell(work)
        if ring { ringDoorbell() }
        return accepted
    }

    /// ``enqueue(_:)`` for callers that hold a lock of their own while queuing (so that nobody can
    /// observe "queued" before the work is in the inbox): appends, and returns whether the caller
    /// must ring the doorbell — after releasing its lock. Lock order: the caller's lock, then the
    /// inbox (never the reverse).
    @inline(__always)
    func enqueueDeferringDoorbell(_ work: consuming QueuedWork) -> (accepted: Bool, ring: Bool) {
        inbox.withLock(handing: work) { inbox, work -> (Bool, Bool) in
            guard !inbox.isShutDown else { return (false, false) }
            inbox.work.append(work)
            // The first item since the loop last collected (its hint is down), from another
            // loop's thread: that loop is in a conversation with this one (``IdleSpin``) whether
            // the sender must ring or this loop is awake, spinning. Marked on ringing only
            // (``ringDoorbell()``), a loop whose partner spins would never be marked, and its
            // sleeps, which the partner's answers end, would earn nothing. Once per batch: a load
            // of the hint's line (the store below writes it anyway) and of a thread-local; a
            // thread without a loop (a burst's producer) goes no further.
            if !workHint.pointee.load(ordering: .relaxed), let sender = ThreadLocals.loop, sender !== self {
                sender.inConversation = true
            }
            return (true, workArrivedLocked(&inbox))
        }
    }

    /// With `inbox` locked, after adding work (or a wake or stop request): raises ``workHint`` for
    /// an owner that is spinning, and returns true when the caller must ring the doorbell (after
    /// unlocking) because the owner is parked.
    ///
    /// The owner itself never rings: it is awake, running the code that queues. It finds
    /// ``Inbox/parked`` still set after a sleep an fd or a timer ended (the loop's wait leaves it set
    /// then), typically when an fd handler queues into the loop's own
    /// port (a message read from another process); the flag is cleared as a ring would, without
    /// the doorbell's `write` and the extra return from `epoll_wait` it would cause.
    @inline(__always)
    func workArrivedLocked(_ inbox: inout Inbox) -> Bool {
        workHint.pointee.store(true, ordering: .releasing)
        return inbox.takeRingDuty() && !isCurrentThread
    }

    /// Runs `body` on the loop's thread and returns its value or rethrows its error; the Swift
    /// answer to `performSelector:onThread:withObject:waitUntilDone:YES` with a result.
    ///
    /// - On the loop's own thread the body runs inline, at once.
    /// - When the loop is shut down (its thread exited, or its ``RunLoopThread`` stopped) it throws
    ///   ``PortRunLoopError/loopShutDown`` at once, and also if the loop shuts down before the body
    ///   started. It never hangs on a dead loop.
    /// - `timeout` bounds the wait for the body to *start*: if it has not started by then, it is
    ///   withdrawn (it will never run) and ``PortRunLoopError/timedOut`` is thrown. A body that has
    ///   started always runs to completion and its result is returned.
    /// - The body runs in the loop's common modes, and also while the loop's thread is itself
    ///   waiting in `performAndWait`: a waiting thread keeps serving calls made to it, so two loop
    ///   threads calling each other at the same time do not deadlock.
    ///
    /// Thread-safety: any thread.
    @inlinable
    public func performAndWait<T: Sendable>(timeout: Duration? = nil, _ body: @Sendable () throws -> T) throws -> T {
        // Inlined into the caller, so `T` is concrete where the result slot is made: a generic
        // function called across modules instead looks up `Optional<Result<T, Error>>`'s metadata
        // in the runtime's cache on every call (~3,400 instructions, a third of a call's cost).
        // The rest is not generic (``runAndWait(timeout:_:)``).
        var result: Result<T, any Error>?
        try withUnsafeMutablePointer(to: &result) { slot in
            try runAndWait(timeout: timeout) { slot.pointee = Result { try body() } }
        }
        return try result!.get()
    }

    /// The body of ``performAndWait(timeout:_:)``: runs `work` on the loop's thread (inline on its
    /// own) and returns once it ran, or throws ``PortRunLoopError/loopShutDown`` or
    /// ``PortRunLoopError/timedOut`` when it never will. `work` writes the caller's result slot;
    /// it is not `@Sendable` because the caller waits until it has run (or was withdrawn), which
    /// ``SynchronousCall`` orders with its completion word.
    ///
    /// Thread-safety: any thread.
    @usableFromInline
    func runAndWait(timeout: Duration?, _ work: () -> Void) throws {
        // Inline on the loop's own thread while the loop lives; a shut-down loop runs nothing (W2),
        // and a dead loop's `pthread_t` may be an unrelated thread's by now (``isLiveOwnerThread``).
        if isCurrentThread {
            guard !isShutDown else { throw PortRunLoopError.loopShutDown }
            return work()
        }
        try withoutActuallyEscaping(work) { escapable in
            let call = SynchronousCall(body: escapable, waiter: PortRunLoop.existingForCurrentThread())
            guard enqueue(QueuedWork(modes: .common, kind: .call(call), context: CallerContext.capture())) else {
                throw PortRunLoopError.loopShutDown
            }
            let deadline = timeout.map { System.monotonicSeconds() + $0.seconds } ?? .infinity
            call.waitUntilComplete(deadline: deadline, on: [self])
            try call.checkRan()
        }
    }

    /// Runs queued work that belongs to `mode`, oldest first, one item at a time so that a nested
    /// run started by an item continues with the next one (FIFO survives nesting). Runs at most as
    /// many items as were queued on entry, so self-requeueing work cannot starve other sources.
    /// Executor jobs never start inside another executor job (a nested run started by a job leaves
    /// them queued for the outer run).
    ///
    /// Blocks and synchronous calls run in the `ServiceContext` of the caller that queued them
    /// (``CallerContext``); executor jobs in their task's.
    ///
    /// Hot path: the filter (mode membership, job nesting) is worked out once per pass, and each
    /// item is found and taken in one access to `localWork` (each access to a class's stored
    /// property is a dynamic exclusivity check). Common modes added by an item take effect on the
    /// next pass, as documented for ``addCommonMode(_:)``.
    func runQueuedWork(mode: RunLoop.Mode) -> Bool {
        var budget = localWork.count
        guard budget > 0 else { return false }
        var handled = false
        let filter = workFilter(for: mode, jobsMayStart: !RunningExecutorJob.isRunningAny)
        let ambient = innermostRunHasAmbientContext
        while budget > 0 {
            budget -= 1
            // P3: the ports this loop already knows have messages (learned in a run of another
            // mode, or a batch a nested run continues) had them sent before the next item was
            // queued: those deliverable now go first, while that item is still in the queue (a
            // handler's nested run finds it there).
            if !pendingPorts.isEmpty || !portsInDelivery.isEmpty { handled = deliverPendingPorts(mode: mode) || handled }
            guard let item = Self.takeFirstAdmitted(from: &localWork, by: filter, in: mode) else { break }
            switch item.kind {
            case .block(let block): withCallerContext(item.context, ambient: ambient, block)
            case .call(let call):
                inConversation = true // its caller waits for the answer
                withCallerContext(item.context, ambient: ambient) { call.run() }
            case .job(let job):
                inConversation = true // a Swift task passing through, as an `await` does
                executorJobsRun.increment()
                runExecutorJob(job)
            case .portReady(let port):
                if portIsReady(port, mode: mode) { handled = true }
                continue // a port is a source, not a perform
            case .registration(let apply):
                apply()
                continue // bookkeeping, not a perform
            }
            performsRun.increment()
            handled = true
        }
        return handled
    }

    /// The position of the oldest queued item that may run now in `mode`, if any.
    func nextRunnableWorkIndex(mode: RunLoop.Mode) -> Int? {
        guard !localWork.isEmpty else { return nil }
        let filter = workFilter(for: mode, jobsMayStart: !RunningExecutorJob.isRunningAny)
        return localWork.firstOffset { filter.admits($0, in: mode) }
    }

    /// Removes and returns the oldest item of `work` that `filter` admits in `mode` (usually the first).
    @inline(__always)
    static func takeFirstAdmitted(from work: inout HandoffQueue<QueuedWork>, by filter: WorkFilter,
                                  in mode: RunLoop.Mode) -> QueuedWork? {
        guard !work.isEmpty else { return nil }
        // The first item is nearly always the one: it is moved out and looked at as a local (a
        // search in place copies each item it looks at, a retain and release of every reference
        // the item holds), and put back only when it may not run now.
        let first = work.popFirst()
        if filter.admits(first, in: mode) { return first }
        return takeAdmittedOutOfTurn(from: &work, puttingBack: first, by: filter, in: mode)
    }

    /// ``takeFirstAdmitted(from:by:in:)`` when the first item may not run now: puts it back and
    /// searches the rest in place.
    @inline(never)
    static func takeAdmittedOutOfTurn(from work: inout HandoffQueue<QueuedWork>, puttingBack first: consuming QueuedWork,
                                      by filter: WorkFilter, in mode: RunLoop.Mode) -> QueuedWork? {
        work.putBackFirst(first)
        guard let offset = work.firstOffset(where: { filter.admits($0, in: mode) }) else { return nil }
        return work.remove(atOffset: offset)
    }
}

extension Duration {
    /// The duration in seconds. Converted from the two 64-bit halves of its attosecond count:
    /// `components` divides the 128-bit count (~200 instructions, and a cross-process request
    /// converts two timeouts), and `Double(attoseconds)` goes through the generic integer
    /// conversion (thousands). `package`: the Redis transport's timers and deadlines use it too.
    package var seconds: Double {
        let attoseconds = self.attoseconds
        let magnitude = attoseconds.magnitude
        let value = (Double(UInt64(truncatingIfNeeded: magnitude >> 64)) * 0x1p64
            + Double(UInt64(truncatingIfNeeded: magnitude))) / 1e18
        return attoseconds < 0 ? -value : value
    }
}
