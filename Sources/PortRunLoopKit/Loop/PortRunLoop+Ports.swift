import Foundation

/// A port scheduled in a loop, with the modes it is scheduled in. Owner thread only.
final class PortRegistration {
    let port: MessagePort
    var modes: ModeSet

    init(port: MessagePort, modes: ModeSet) {
        self.port = port
        self.modes = modes
    }
}

extension PortRunLoop {
    /// Schedules `port` in `mode` (`-[NSRunLoop addPort:forMode:]`). A port may be in several modes
    /// of one loop; scheduling it in a second loop is a programmer error (precondition). Adding an
    /// invalidated port does nothing.
    ///
    /// Thread-safety: any thread. On the loop's thread it takes effect at once; from another thread
    /// before the loop's next turn (a sleeping loop is woken).
    public func add(_ port: MessagePort, forMode mode: RunLoop.Mode) {
        guard port.attach(to: self) else { return }
        onOwner { loop in loop.registerPort(port, mode: mode) }
    }

    /// Removes `port` from `mode`. When it is in no mode of this loop any more it is unscheduled
    /// (messages stay queued in it) and may be scheduled in another loop.
    ///
    /// Thread-safety: any thread; takes effect like ``add(_:forMode:)-(MessagePort,_)``.
    public func remove(_ port: MessagePort, forMode mode: RunLoop.Mode) {
        onOwner { loop in
            guard let registration = loop.ports[ObjectIdentifier(port)] else { return }
            registration.modes = registration.modes.removing(mode)
            if registration.modes.isEmpty { loop.unregisterPort(port, discardingBuffered: false) }
        }
    }

    /// Producer side: `port` went from empty to non-empty while attached here.
    func portBecameReady(_ port: MessagePort) {
        enqueue(QueuedWork(modes: .all, kind: .portReady(port)))
    }

    private func registerPort(_ port: MessagePort, mode: RunLoop.Mode) {
        guard port.isValid, port.isAttached(to: self) else { return }
        let id = ObjectIdentifier(port)
        if let registration = ports[id] {
            registration.modes = registration.modes.inserting(mode)
        } else {
            ports[id] = PortRegistration(port: port, modes: ModeSet([mode]))
        }
    }

    /// Owner thread: forgets `port`. Messages the loop had already taken are discarded (and
    /// counted) when the port was invalidated, or put back in front of its queue otherwise.
    func unregisterPort(_ port: MessagePort, discardingBuffered: Bool) {
        ports[ObjectIdentifier(port)] = nil
        pendingPorts.removeAll { $0 === port }
        if discardingBuffered || !port.isValid {
            port.ownerDiscardedCounter.increment(by: port.ownerBuffer.count)
            port.ownerBuffer.removeAll()
        }
        port.detach(from: self)
    }

    /// Owner: a port-ready item reached the head of the work queue. Delivers now when the port is
    /// scheduled in `mode`; otherwise keeps it pending until a run of one of its modes (or until
    /// its registration, still on its way from another thread, arrives).
    func portIsReady(_ port: MessagePort, mode: RunLoop.Mode) -> Bool {
        if let registration = ports[ObjectIdentifier(port)], registration.modes.contains(mode, commonModes: ownerCommonModes) {
            return deliverMessages(of: port)
        }
        if port.isValid && port.isAttached(to: self) { pendingPorts.append(port) }
        return false
    }

    /// True when a pending port could be delivered in `mode` right now.
    func hasDeliverablePendingPort(mode: RunLoop.Mode) -> Bool {
        pendingPorts.contains { ports[ObjectIdentifier($0)]?.modes.contains(mode, commonModes: ownerCommonModes) ?? false }
    }

    /// Delivers the messages of every ready port scheduled in `mode`, port by port, message by
    /// message. Handlers may start nested runs: the shared structures are re-read after each call.
    func deliverPendingPorts(mode: RunLoop.Mode) -> Bool {
        guard !pendingPorts.isEmpty else { return false }
        var handled = false
        let common = ownerCommonModes
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
            guard registration.modes.contains(mode, commonModes: common) else { index += 1; continue }
            pendingPorts.remove(at: index)
            handled = deliverMessages(of: port) || handled
            index = 0
        }
        return handled
    }

    func deliverMessages(of port: MessagePort) -> Bool {
        let (delegate, handler) = port.takeQueuedMessages()
        var delivered = false
        while let envelope = port.ownerBuffer.popFirst() {
            guard port.gate.tryEnter() else {
                port.ownerDiscardedCounter.increment(by: port.ownerBuffer.count + 1)
                port.ownerBuffer.removeAll()
                break
            }
            let message = MessagePort.Message(msgid: envelope.msgid, components: envelope.components,
                                      replyPort: envelope.replyPort, receivePort: port)
            if let handler {
                handler(message)
            } else if let delegate {
                delegate.handleMessage(message)
            } else {
                // Nobody to hand it to (no handler, delegate gone): dropped, and counted as such.
                // The source still fired, so the turn counts as having handled a source.
                port.gate.exit()
                port.ownerDiscardedCounter.increment()
                delivered = true
                continue
            }
            port.gate.exit()
            port.deliveredCounter.increment()
            messagesDelivered.increment()
            delivered = true
        }
        return delivered
    }
}
