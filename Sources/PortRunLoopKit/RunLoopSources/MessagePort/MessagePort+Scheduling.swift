import Foundation
import Synchronization

extension MessagePort {
    /// Records that `loop` schedules this port; traps if another loop already does. Returns false
    /// for an invalidated port (nothing is scheduled).
    /// Any thread, for `loop.add(self, forMode: mode)`: schedules the port in `mode` of `loop`.
    /// Returns false for an invalid port (nothing to do) and whether the caller must ring `loop`'s
    /// doorbell (held messages are now the loop's to deliver). A port scheduled in another loop
    /// is a programmer error.
    func schedule(on loop: PortRunLoop, mode: RunLoop.Mode) -> (accepted: Bool, ring: Bool) {
        Misuse.check(remote == nil, "PortRunLoop.add(_:forMode:): a remote MessagePort (one that stands for a port of another process) cannot be scheduled in a loop")
        return withLock {
            guard state.isValid else { return (false, false) }
            if let current = state.loop {
                Misuse.check(current === loop,
                             "PortRunLoop.add(_:forMode:): this MessagePort is already scheduled in another PortRunLoop ('\(current.name)'); remove it there first")
            }
            state.loop = loop
            state.modes.insert(mode)
            guard state.leaving == nil, !state.queue.isEmpty, !state.readyOnLoop else { return (true, false) }
            state.readyOnLoop = true
            return (true, loop.portBecameReady(self)) // queued under our lock, as in send
        }
    }

    /// Any thread, for `loop.remove(self, forMode: mode)`: unschedules the port from `mode`. Once
    /// it is in no mode it is detached at once (another loop may take it), and `loop`'s thread
    /// lets go of it when it next syncs (``finishLeaving(_:)``). False when it was not scheduled
    /// in `loop`.
    func unschedule(from loop: PortRunLoop, mode: RunLoop.Mode) -> Bool {
        withLock {
            guard state.loop === loop, state.modes.remove(mode) != nil else { return false }
            if state.modes.isEmpty {
                state.loop = nil
                state.registration = nil
                state.readyOnLoop = false
                if state.leaving == nil { state.leaving = loop }
            }
            return true
        }
    }

    /// Owner thread of `loop`: the modes the port is scheduled in there (empty: not scheduled).
    func scheduledModes(on loop: PortRunLoop) -> Set<RunLoop.Mode> {
        withLock { state.loop === loop && state.isValid ? state.modes : [] }
    }

    /// Owner thread of `loop`, once it holds no messages of the port any more: if the port was
    /// leaving `loop`, it has left; held messages are then handed to the loop it is scheduled in
    /// now, if any.
    func finishLeaving(_ loop: PortRunLoop) {
        let next: PortRunLoop? = withLock {
            guard state.leaving === loop else { return nil }
            state.leaving = nil
            guard let next = state.loop, !state.queue.isEmpty, !state.readyOnLoop else { return nil }
            state.readyOnLoop = true
            return next.portBecameReady(self) ? next : nil
        }
        next?.ringDoorbell()
    }

    /// A loop's thread, at the end of a batch during which a handler took the port out of that
    /// loop: the messages it delivered, counted under the lock (the port's owner counter may be
    /// another loop's by then, and has one writer).
    func countDelivered(afterLeaving count: Int) {
        guard count > 0 else { return }
        withLock { state.deliveredAfterLeaving += count }
    }

    /// Whether this port is currently scheduled in `loop`.
    func isAttached(to loop: PortRunLoop) -> Bool { withLock { state.loop === loop } }

    /// Owner thread of `loop`: `loop`'s registration of the port, if the port is scheduled there
    /// and the registration has been made (one lock on the line the batch's take locks next).
    func registration(on loop: PortRunLoop) -> PortRegistration? {
        withLock { state.loop === loop ? state.registration : nil }
    }

    /// Owner thread of `loop`: records `registration`, `loop`'s current one, unless the port has
    /// left `loop` meanwhile (another thread removed it).
    func adopt(_ registration: PortRegistration, on loop: PortRunLoop) {
        withLock { if state.loop === loop { state.registration = registration } }
    }

    /// Owner thread: puts the messages the loop took but did not deliver (the port was removed from
    /// the running mode by a handler) back in front of the queue, where they count against the
    /// limit again; discards and counts them instead if the port was invalidated meanwhile.
    func requeueBuffered() {
        guard !ownerBuffer.isEmpty else { return }
        withLock {
            if state.isValid {
                state.queue.prepend(movingContentsOf: &ownerBuffer)
            } else {
                discardBuffered()
            }
        }
    }

    /// Owner thread: drops the messages the loop took but will not deliver (the port was
    /// invalidated, or nobody handles them), counting them as discarded.
    func discardBuffered() {
        ownerDiscardedCounter.increment(by: ownerBuffer.count)
        if remoteSendersSeen.load(ordering: .relaxed) {
            // Messages from other processes give their senders' credits back even when dropped.
            while !ownerBuffer.isEmpty { ownerBuffer.popFirst().payload?.creditSink?.messageTaken() }
        }
        ownerBuffer.removeAll()
    }

    /// Owner thread: moves queued messages to ``ownerBuffer`` and returns who handles them.
    ///
    /// Hot path (once per delivered batch): explicit lock/unlock rather than `withLock`, because
    /// returning the handler closure through `withLock`'s generic result reabstracts it twice, and
    /// each reabstraction thunk is a heap allocation (2 mallocs per batch, i.e. per message when
    /// messages arrive one at a time; see Docs/Benchmarks.md). Inlined into its one caller
    /// (``PortRunLoop/deliverMessages(of:registration:mode:)``): a batch after an idle spell runs
    /// it cold, and a function of its own is one more piece of code to fetch.
    ///
    /// Returns nil, taking nothing, when the messages are not `loop`'s to take: the port is
    /// scheduled elsewhere (or nowhere), or is still leaving another loop.
    @inline(__always)
    func takeQueuedMessages(by loop: PortRunLoop) -> (delegate: (any MessagePortDelegate)?, handler: (@Sendable (MessagePort.Message) -> Void)?)? {
        lock()
        defer { unlock() }
        guard state.loop === loop, state.leaving == nil || state.leaving === loop else {
            if state.loop === loop { state.readyOnLoop = false } // `finishLeaving` will tell it again
            return nil
        }
        if !state.queue.isEmpty {
            // Usually the owner buffer is empty and the whole queue is handed over by swapping
            // buffers (no per-message copy, retain or release; both keep their capacity).
            ownerBuffer.append(movingContentsOf: &state.queue)
            if !state.roomWaits.isEmpty { notifyRoomChanged() }
        }
        state.readyOnLoop = false
        // The delegate only counts without a handler, and reading it (a weak reference) is a
        // call into the runtime: not made when there is a handler.
        guard let handler = state.handler else { return (state.delegate, nil) }
        return (nil, handler)
    }
}
