import Foundation
import Logging
import Synchronization

extension MessagePort {
    /// Sends a message (`-[NSPort sendBeforeDate:msgid:components:from:reserved:]`).
    ///
    /// - Parameters:
    ///   - date: how long to wait for room when the queue is full; now or past means try once.
    ///   - msgid: an identifier for the receiver.
    ///   - components: data to carry; empty sends a pure signal and allocates nothing.
    ///   - replyPort: a port the receiver may answer on.
    /// - Returns: true when the message was queued; false when the port is invalid or stayed full
    ///   until `date`. A false return means the message will never be delivered. On the thread of
    ///   the loop the port is scheduled in, a full port returns false at once: only that thread
    ///   could make room, so waiting would never end.
    ///
    /// Thread-safety: any thread.
    @discardableResult
    public func send(before date: Date, msgid: UInt32 = 0, components: [Data] = [], from replyPort: MessagePort? = nil) -> Bool {
        if components.isEmpty, replyPort == nil, !CallerContext.isCapturing.load(ordering: .relaxed) {
            if sendSignalAtOnce(msgid: msgid, before: date) { return true }
            // Constants rather than the arguments: nothing but `date` and `msgid` has to survive
            // the attempt above, which then needs no saved registers.
            return sendInFull(before: date, msgid: msgid, components: [], from: nil)
        }
        return sendInFull(before: date, msgid: msgid, components: components, from: replyPort)
    }

    /// The public send's general case, out of line so that the burst case above needs no frame.
    @inline(never)
    private func sendInFull(before date: Date, msgid: UInt32, components: [Data], from replyPort: MessagePort?) -> Bool {
        guard CallerContext.isCapturing.load(ordering: .relaxed) else {
            // A literal nil, not `capture()`'s answer: the send then has no context reference to
            // release afterwards (a runtime call per send otherwise).
            return send(before: date, msgid: msgid, components: components, from: replyPort, context: nil)
        }
        return send(before: date, msgid: msgid, components: components, from: replyPort, context: CallerContext.capture())
    }

    /// A pure signal's send (no components, no reply port, no context to carry) when it can be
    /// done at once, the case of nearly every signal: the lock is free, the port is valid and has
    /// room, and the queue's storage has a free slot. Returns false, having changed nothing, in
    /// every other case: the caller then makes the full
    /// ``send(before:msgid:components:from:context:doorbell:descriptors:)``, which waits, grows or
    /// rejects.
    ///
    /// Why a second path: a burst of signals is the port's throughput case, where the sending
    /// thread's instructions are the cost of a message, and this one is about 45 of them against
    /// 65 for the full path's (callgrind): in a burst (the loop already told of the batch) it
    /// calls nothing on its way (an unlock wakes a parked locker only when there is one), so it
    /// needs no saved registers, no payload decision and no out-of-line branch. It does what the
    /// full path does in the same case, under the same lock.
    ///
    /// The first message of a batch goes this way too, to ``tellLoopAndUnlock()``: after an idle
    /// spell that send is the latency of the loop's wake-up, and every function on its way is code
    /// to fetch on a cold CPU; giving up here would unlock, go through the full path's two
    /// functions and lock again, each a fetch from cold caches on that path (Docs/Benchmarks.md,
    /// "The hand-off paths"; `FirstSendAfterIdle.Interleaved`, `Ours.MessagePort.send`).
    @inline(__always)
    private func sendSignalAtOnce(msgid: UInt32, before date: Date) -> Bool {
        // A NaN date, a remote port and a taken lock go the full way (which traps on the NaN).
        guard remote == nil, !date.timeIntervalSinceReferenceDate.isNaN, state.word.tryLock() else { return false }
        guard state.isValid, state.queue.count < state.limit, state.queue.hasRoomAtTail else {
            unlock()
            return false
        }
        state.queue.append(Envelope(msgid: msgid, payload: nil))
        state.sent &+= 1
        guard state.readyOnLoop else { return tellLoopAndUnlock() }
        unlock()
        return true
    }

    /// ``send(before:msgid:components:from:)`` with the context the handler is to run in (the
    /// public one passes the caller's). A `doorbell` send is a pure signal whose rejection is
    /// expected (a signal is already queued, as in the article's zero-timeout send): rejections are
    /// counted as usual and logged, aggregated, at `.debug` only.
    @discardableResult
    func send(before date: Date, msgid: UInt32 = 0, components: [Data] = [], from replyPort: MessagePort? = nil,
              context: CapturedContext?, doorbell: Bool = false, descriptors: [TransferredFileDescriptor] = []) -> Bool {
        if let remote {
            return send(to: remote, before: date, msgid: msgid, components: components, replyPort: replyPort,
                        descriptors: descriptors.isEmpty ? [] : descriptors.compactMap { $0.fileDescriptor })
        }
        Misuse.check(!date.timeIntervalSinceReferenceDate.isNaN, "MessagePort.send(before:): the date is NaN")
        // Made before the lock: a payload box is the send's only allocation, and the lock is
        // held for the queue's append alone.
        let envelope = Envelope(
            msgid: msgid,
            payload: components.isEmpty && replyPort == nil && context == nil && descriptors.isEmpty
                ? nil : Payload(components: components, replyPort: replyPort, context: context, fileDescriptors: descriptors))
        lock()
        // The fast path, every send of a burst: valid, room, and the loop already told. The rest
        // (full, invalid, first message of a batch) is out of line, so that this path's frame
        // stays small.
        guard state.isValid, state.queue.count < state.limit else {
            return sendFindingNoRoom(envelope, before: date, doorbell: doorbell)
        }
        return queueAndUnlock(envelope)
    }

    /// With the lock held and the port valid: queues `envelope` (moved, not copied: no retain and
    /// release of its payload), counts it as sent, tells the loop if this is the first message it
    /// has not been told about (``tellLoopAndUnlock()``), and unlocks. Returns true.
    @inline(__always)
    private func queueAndUnlock(_ envelope: consuming Envelope) -> Bool {
        state.queue.append(envelope)
        state.sent &+= 1
        guard state.readyOnLoop else { return tellLoopAndUnlock() }
        unlock()
        return true
    }

    /// The rest of a send that found the port invalid or full, with the lock held: waits for room
    /// until `date` (not on the port's own loop's thread), then queues `envelope` or counts the
    /// rejection. Unlocks.
    @inline(never)
    private func sendFindingNoRoom(_ envelope: consuming Envelope, before date: Date, doorbell: Bool) -> Bool {
        guard state.isValid else {
            state.rejected += 1
            unlock()
            return false
        }
        // Only the port's loop makes room, so its own thread waiting for room would wait for
        // itself: on that thread a full port fails at once, whatever the date. So does the thread
        // of a loop the port is leaving (removed by another thread): until it lets go, which it
        // cannot while it waits, no loop takes the port's messages.
        let selfSend = (state.loop?.isCurrentThread ?? false) || (state.leaving?.isCurrentThread ?? false)
        guard !selfSend, waitForRoom(until: date) else {
            state.rejected += 1
            guard state.isValid else { unlock(); return false } // invalidated while waiting
            state.rejectedFull += 1
            let rejectedFull = state.rejectedFull
            let loop = state.loop
            let limit = state.limit
            unlock()
            if rejectedFull == 1 || rejectedFull % MessagePort.rejectionLogInterval == 0 {
                logRejections(total: rejectedFull, limit: limit, loop: loop, doorbell: doorbell)
            }
            return false
        }
        return queueAndUnlock(envelope)
    }

    /// With the lock held, after a message was queued on a port its loop has not been told about
    /// (the first message of a batch, or a port in no loop yet): queues the port-ready item on the
    /// loop (under this lock: see ``PortRunLoop/portBecameReady(_:)``), unlocks, and rings the
    /// loop's doorbell if it sleeps. Returns true (the message is queued).
    @inline(never)
    private func tellLoopAndUnlock() -> Bool {
        var loopToRing: PortRunLoop?
        if let loop = state.loop {
            state.readyOnLoop = true
            if loop.portBecameReady(self) { loopToRing = loop }
        }
        unlock()
        loopToRing?.ringDoorbell()
        return true
    }

    /// Queues a message that came from another process, whatever the queue limit: the sender's
    /// credits bound what it may have queued (CrossProcess/). False for an invalid port (the
    /// message is not counted: the connection goes away with the port).
    func inject(msgid: UInt32, payload: consuming Payload) -> Bool {
        if !remoteSendersSeen.load(ordering: .relaxed) { remoteSendersSeen.store(true, ordering: .relaxed) }
        lock()
        guard state.isValid else { unlock(); return false }
        return queueAndUnlock(Envelope(msgid: msgid, payload: payload))
    }

    /// A full port logs its first rejected send, then one entry per this many (so a burst of
    /// rejections costs a few log entries, not one per message).
    ///
    /// Thread-safety: a constant.
    public static let rejectionLogInterval = 1024

    /// Logs that the port stayed full for `total` rejected sends so far (a rare path: see
    /// ``rejectionLogInterval``).
    private func logRejections(total: Int, limit: Int, loop: PortRunLoop?, doorbell: Bool) {
        let since = total == 1 ? 1 : min(total - 1, MessagePort.rejectionLogInterval)
        logger(loop: loop).log(level: doorbell ? .debug : .warning,
                               doorbell ? "MessagePort doorbell signals dropped (one is already queued)"
                                        : "MessagePort stayed full; sends were rejected", metadata: [
            LogKey.port: "\(self)", LogKey.loop: "\(loop?.name ?? "none")", LogKey.rejected: "\(total)",
            LogKey.rejectedSinceLastLog: "\(since)", LogKey.queueLimit: "\(limit)",
        ])
    }
}
