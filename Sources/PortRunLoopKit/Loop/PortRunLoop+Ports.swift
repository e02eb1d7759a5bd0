import Foundation

/// A port scheduled in a loop, with its group (the modes it is scheduled in).
///
/// Thread-safety: the loop's thread only. Its `var`s are `@exclusivity(unchecked)`, as the loop's
/// own are (``PortRunLoop``): a port's batch reads them, and each access is one expression that
/// runs no handler.
final class PortRegistration {
    let port: MessagePort
    @exclusivity(unchecked) private(set) var group: SourceGroup
    /// Moves whenever the modes change or the registration ends (``changed()``). A delivery batch
    /// re-checks "is the port still scheduled in the running mode?" only when it moved, instead of
    /// a dictionary look-up per message.
    @exclusivity(unchecked) private(set) var generation: UInt = 0

    init(port: MessagePort, group: SourceGroup) {
        self.port = port
        self.group = group
        group.ports += 1
    }

    var modes: ModeSet { group.modes }

    /// Moves the port to the group of another set of modes.
    func move(to newGroup: SourceGroup) {
        group.ports -= 1
        group = newGroup
        newGroup.ports += 1
        changed()
    }

    /// Ends the registration (the port leaves its group).
    func end() {
        group.ports -= 1
        changed()
    }

    /// Records a change that may end delivery in a mode (modes changed, or unregistered).
    func changed() { generation &+= 1 }
}

extension PortRunLoop {
    /// Schedules `port` in `mode` (`-[NSRunLoop addPort:forMode:]`). A port may be in several modes
    /// of one loop; scheduling it in a second loop is a programmer error (precondition). Adding an
    /// invalidated port does nothing.
    ///
    /// Thread-safety: any thread. On the loop's thread it takes effect at once; from another thread
    /// before the loop's next turn (a sleeping loop is woken).
    public func add(_ port: MessagePort, forMode mode: RunLoop.Mode) {
        let (accepted, ring) = port.schedule(on: self, mode: mode)
        guard accepted else { return }
        if ring { ringDoorbell() }
        // A shut-down loop invalidates its ports; one added to it afterwards gets the same fate.
        if !registerOnOwner({ loop in loop.syncPort(port) }) { port.invalidate() }
    }

    /// Removes `port` from `mode`. When it is in no mode of this loop any more it is unscheduled
    /// (messages stay queued in it) and may at once be scheduled in another loop. No other loop
    /// takes the port's messages until this loop's thread has let go of it: at its next turn
    /// (after a batch of the port it is delivering), or as the loop shuts down. Removed from
    /// another thread while this loop's thread runs no loop, the port's messages wait for that.
    ///
    /// Thread-safety: any thread; takes effect like ``add(_:forMode:)-(MessagePort,_)``.
    public func remove(_ port: MessagePort, forMode mode: RunLoop.Mode) {
        guard port.unschedule(from: self, mode: mode) else { return }
        registerOnOwner { loop in loop.syncPort(port) }
    }

    /// Owner: makes the loop's registration of `port` follow the port's own record of where it is
    /// scheduled (``MessagePort/scheduledModes(on:)``), whatever order adds and removes made on
    /// other threads arrive in. Every add and remove queues one; each is idempotent. The loop's
    /// shutdown syncs every port it has registered too.
    func syncPort(_ port: MessagePort) {
        // A shut-down loop invalidates the ports still scheduled in it (L4); one removed from it
        // meanwhile only leaves, like any removed port.
        let isShutDown = inbox.withLock { $0.isShutDown }
        if isShutDown, port.invalidate(ifScheduledOn: self) { return }
        let modes = isShutDown ? [] : port.scheduledModes(on: self)
        let id = ObjectIdentifier(port)
        if modes.isEmpty {
            if ports[id] != nil {
                unregisterPort(port, discardingBuffered: !port.isValid)
            } else {
                port.finishLeaving(self)
            }
            return
        }
        let modeSet = ModeSet(modes)
        let registration: PortRegistration
        if let existing = ports[id] {
            registration = existing
            if modeSet != registration.modes { registration.move(to: sourceGroup(for: modeSet)) }
        } else {
            registration = PortRegistration(port: port, group: sourceGroup(for: modeSet))
            ports[id] = registration
        }
        // Also when kept: a port removed and added back before this sync dropped its record.
        port.adopt(registration, on: self)
        port.finishLeaving(self) // removed and added back here before this loop let go of it
    }

    /// Producer side, called with the port's lock held: `port` went from empty to non-empty while
    /// attached here. Queuing the port-ready item under the port's lock is what keeps a later send
    /// (which finds the port already marked ready and queues nothing) from returning before the
    /// loop knows about its message — otherwise a `perform` or a `RunLoopThread.stop()` made after
    /// that send could overtake it. Returns true when the caller must ring the doorbell, which it
    /// does after releasing the port's lock. Lock order: port, then inbox (never the reverse).
    @inline(__always)
    func portBecameReady(_ port: MessagePort) -> Bool {
        enqueueDeferringDoorbell(QueuedWork(modes: .all, kind: .portReady(port))).ring
    }

    /// Owner thread: forgets `port`. Messages the loop had already taken are discarded (and
    /// counted) when the port was invalidated, or put back in front of its queue otherwise.
    func unregisterPort(_ port: MessagePort, discardingBuffered: Bool) {
        ports.removeValue(forKey: ObjectIdentifier(port))?.end()
        pendingPorts.removeAll { $0 === port }
        if discardingBuffered || !port.isValid {
            port.discardBuffered()
        } else {
            // Before letting go: from then on another loop may take the port's messages.
            port.requeueBuffered()
        }
        port.finishLeaving(self)
    }

    /// Owner: a port-ready item reached the head of the work queue. Delivers now when the port is
    /// scheduled in `mode`; otherwise keeps it pending until a run of one of its modes (or until
    /// its registration, still on its way from another thread, arrives).
    func portIsReady(_ port: MessagePort, mode: RunLoop.Mode) -> Bool {
        // The port's own record of this loop's registration: no hashing into `ports` per batch.
        if let registration = port.registration(on: self), registration.group.isInRunningMode {
            return deliverMessages(of: port, registration: registration, mode: mode)
        }
        if port.isValid && port.isAttached(to: self) { pendingPorts.append(port) }
        return false
    }

    /// True when a pending port could be delivered in `mode` right now.
    func hasDeliverablePendingPort(mode: RunLoop.Mode) -> Bool {
        pendingPorts.contains { ports[ObjectIdentifier($0)]?.group.isInRunningMode ?? false }
    }

    /// Delivers the messages of every ready port scheduled in `mode`, port by port, message by
    /// message. Handlers may start nested runs: the shared structures are re-read after each call.
    func deliverPendingPorts(mode: RunLoop.Mode) -> Bool {
        var handled = portsInDelivery.isEmpty ? false : continueInterruptedBatches(mode: mode)
        guard !pendingPorts.isEmpty else { return handled }
        var index = 0
        while index < pendingPorts.count {
            let port = pendingPorts[index]
            guard let registration = ports[ObjectIdentifier(port)] else {
                if !port.isAttached(to: self) || !port.isValid {
                    pendingPorts.remove(at: index)
                } else {
                    index += 1 // registration still on its way from another thread
                }
                continue
            }
            guard registration.group.isInRunningMode else { index += 1; continue }
            pendingPorts.remove(at: index)
            handled = deliverMessages(of: port, registration: registration, mode: mode) || handled
            index = 0
        }
        return handled
    }

    /// R8: a nested run started by a port's handler delivers the rest of that port's batch (and
    /// anything sent to it since) when the port is scheduled in the nested run's mode.
    private func continueInterruptedBatches(mode: RunLoop.Mode) -> Bool {
        var handled = false
        // The ports in delivery on entry: a delivery below pushes and pops its own.
        for offset in 0..<portsInDelivery.count {
            let port = portsInDelivery.element(atOffset: offset)
            guard !port.ownerBuffer.isEmpty, let registration = ports[ObjectIdentifier(port)],
                  registration.group.isInRunningMode else { continue }
            handled = deliverMessages(of: port, registration: registration, mode: mode) || handled
        }
        return handled
    }

    /// Delivers the messages `port` has queued (one batch) in `mode`, in order. `registration` is
    /// the port's, which the caller has just found scheduled in the running mode (so the batch's
    /// first message needs no second look-up).
    ///
    /// Hot path, per message: one registration-generation load, one gate-closed load, one buffer
    /// pop and the handler call — no atomic read-modify-write and no retain. The gate is entered
    /// once per batch (its in-flight count means "the loop is inside this port's batch"), so an
    /// `invalidate()` is seen at the next message by a plain load; the handler closure is
    /// unwrapped once; one `Message` per batch holds the (retained-once) receive port and only its
    /// per-message fields are reassigned. Docs/Benchmarks.md, "The hand-off paths", says what this
    /// leaves per message (`Throughput1P.Ours.MessagePort.send`).
    func deliverMessages(of port: MessagePort, registration: PortRegistration, mode: RunLoop.Mode) -> Bool {
        guard let (delegate, handler) = port.takeQueuedMessages(by: self), !port.ownerBuffer.isEmpty else { return false }
        guard port.gate.tryEnter() else {
            port.discardBuffered()
            return false
        }
        defer { port.gate.exit() }
        if let handler {
            return deliverBuffered(of: port, registration: registration, mode: mode) { handler($0) }
        } else if let delegate {
            return deliverBuffered(of: port, registration: registration, mode: mode) { delegate.handleMessage($0) }
        } else {
            // Nobody to hand them to (no handler, delegate gone): dropped, and counted as such.
            // The source still fired, so the turn counts as having handled a source.
            port.discardBuffered()
            return true
        }
    }

    /// The per-message loop of ``deliverMessages(of:registration:mode:)``; the caller holds the
    /// port's gate.
    @inline(__always)
    private func deliverBuffered(of port: MessagePort, registration: PortRegistration, mode: RunLoop.Mode,
                                 to deliver: (MessagePort.Message) -> Void) -> Bool {
        // Counted here and added to the port's and the loop's counters once, when the batch ends:
        // two read-modify-writes of memory per message fewer.
        var count = 0
        // Set when a handler took the port out of this loop: its owner-side state may be another
        // loop's from then on (see below), and so may its owner counter.
        var leftThisLoop = false
        portsInDelivery.append(port)
        defer {
            _ = portsInDelivery.popLast()
            if leftThisLoop { port.countDelivered(afterLeaving: count) } else { port.deliveredCounter.increment(by: count) }
            messagesDelivered.increment(by: count)
        }
        let id = ObjectIdentifier(port)
        // The registration that passed the last full check, and its generation then. Common modes
        // only ever grow, and a nested run that changes the running mode returns before the next
        // message, so a passed check stays valid until the registration changes. Kept as two plain
        // locals (not an optional tuple, whose binding retained and released the registration
        // on every message).
        var checkedRegistration = registration
        var checkedGeneration = registration.generation
        var message = MessagePort.Message(msgid: 0, components: [], receivePort: port)
        let ambient = innermostRunHasAmbientContext
        var messageCarries = false // `message` holds the last payload's components, reply or descriptors
        while true {
            // A handler may have removed the port from this mode (or from the loop): the rest of
            // the batch must not be delivered here any more (M1/M4). Unregistered, its buffer was
            // already put back and may be another loop's now: not even its emptiness is looked
            // at, which is why this check comes first. Still scheduled in other modes, the rest
            // is put back and the port kept pending for them.
            if checkedRegistration.generation != checkedGeneration {
                // Changed since the last check (the per-message fast path is the test above).
                guard let registration = ports[id] else {
                    leftThisLoop = true
                    break
                }
                guard registration.group.isInRunningMode else {
                    port.requeueBuffered()
                    if !pendingPorts.contains(where: { $0 === port }) { pendingPorts.append(port) }
                    break
                }
                checkedRegistration = registration
                checkedGeneration = registration.generation
            }
            if port.ownerBuffer.isEmpty { break }
            // Invalidated (by a handler, or by another thread since the last message): once
            // `invalidate()` has returned no handler may start, so the rest is discarded. A plain
            // acquiring load suffices: this thread is already counted in the gate, so an
            // `invalidate()` racing with this check is ordered like one racing with `tryEnter`.
            if port.gate.isClosed {
                port.discardBuffered()
                break
            }
            // A pure signal (no payload) is read in place and dropped without a release of its
            // nil payload, a runtime call per message otherwise; a message with a payload is moved
            // out, and its payload released once it was delivered. Signals, local or from another
            // process, are then delivered in one place below: a local function for it would
            // capture `message`, and a captured `var` gets a run-time exclusivity check (a call
            // into the runtime per batch, on code a batch after an idle spell fetches for nothing
            // else).
            let isSignal: Bool
            if let msgid = port.ownerBuffer.popFirstTrivially({ $0.payload == nil ? $0.msgid : nil }) {
                message.msgid = msgid
                isSignal = true
            } else {
                let envelope = port.ownerBuffer.popFirst()
                let payload = envelope.payload.unsafelyUnwrapped // not a pure signal: see above
                message.msgid = envelope.msgid
                payload.creditSink?.messageTaken() // a message from another process: its credit goes back
                isSignal = payload.carriesOnlyCredit // a pure signal from another process
                if !isSignal {
                    message.carry(payload)
                    messageCarries = true
                    withCallerContext(payload.context, ambient: ambient) { deliver(message) }
                }
            }
            if isSignal {
                if messageCarries {
                    // A pure signal after a message that carried something.
                    message.carryNothing()
                    messageCarries = false
                }
                // Called directly when there is no context to clear: through `withCallerContext`
                // the closure it passes on is made before its tests, on every message.
                if ambient { withCallerContext(nil, ambient: true) { deliver(message) } } else { deliver(message) }
            }
            count &+= 1
        }
        return count > 0
    }
}
