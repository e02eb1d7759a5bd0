import Foundation
import PortRunLoopKit

extension BusNotificationCenter: TransportDelegate {
    /// A notification from the bus (loop thread): each matching observation gets it now, or per its
    /// suspension behaviour.
    ///
    /// Thread-safety: the transport's loop thread.
    package func transportReceived(_ envelope: consuming NotificationEnvelope) {
        let records = state.withLock { state in
            state.metrics.received += 1
            return state.observations
        }
        var delivered = 0, dropped = 0, coalesced = 0, overflowed = 0
        for record in records where record.wants(envelope) {
            // The userInfo in the form this observation takes, made once for all of them.
            if let fields = record.wantsFields { envelope.provideUserInfo(asFields: fields) }
            let behavior = record.behavior ?? .coalesce
            // Read per observation: a handler called inline above may have resumed the center
            // (which delivered what was held), and what follows must not be held again.
            if !loopState.suspended || envelope.deliverImmediately || behavior == .deliverImmediately {
                delivered += flushHeld(record)
                deliver(envelope, to: record)
                delivered += 1
                continue
            }
            switch behavior {
            case .drop:
                dropped += 1
            case .coalesce:
                if let index = record.held.firstIndex(where: { $0.hasSameCoalescingKey(as: envelope) }) {
                    record.held.remove(at: index)
                    coalesced += 1
                    record.held.append(copy envelope) // held: the rare, suspended path
                } else if hold(envelope, in: record) {
                    overflowed += 1
                }
            case .hold:
                if hold(envelope, in: record) { overflowed += 1 }
            case .deliverImmediately:
                break // handled above
            }
        }
        if delivered + dropped + coalesced + overflowed > 0 {
            state.withLock { state in
                state.metrics.delivered += delivered
                state.metrics.droppedWhileSuspended += dropped
                state.metrics.coalesced += coalesced
                state.metrics.heldOverflow += overflowed
            }
        }
    }

    /// Keeps `envelope` for `record` while suspended, up to ``heldNotificationLimit``; returns
    /// true when it is discarded instead (the first such discard per suspension is logged).
    private func hold(_ envelope: borrowing NotificationEnvelope, in record: BusObservationRecord) -> Bool {
        if record.held.count < heldNotificationLimit {
            record.held.append(copy envelope) // held: the rare, suspended path
            return false
        }
        if !record.overflowReported {
            record.overflowReported = true
            logger.warning("BusNotificationCenter: a held observation is full; later notifications are discarded until resumed",
                           metadata: [BusLogKey.observation: "\(record.label)", BusLogKey.holdLimit: "\(heldNotificationLimit)"])
        }
        return true
    }

    /// Whether any observation takes the transport's signals (the transport makes one only then).
    ///
    /// Thread-safety: any thread (the transport reads it on its loop thread).
    package var observesSignals: Bool { signalObservationCount.load(ordering: .relaxed) > 0 }

    /// A transport's signal (loop thread): each signal observation that accepts it gets it.
    ///
    /// Thread-safety: the transport's loop thread.
    package func transportReceived(signal: any Sendable) {
        let records = state.withLock { $0.observations }
        for record in records {
            guard case .signals(let accepts) = record.filter, accepts(signal),
                  case .signal(let loop, let handler) = record.target else { continue }
            run(on: loop, for: record) { handler(signal) }
        }
    }

    /// A malformed notification was dropped: counted and logged.
    ///
    /// Thread-safety: the transport's loop thread.
    package func transportDroppedMalformed(from sender: String, reason: String) {
        state.withLock { $0.metrics.malformedDropped += 1 }
        logger.warning("BusNotificationCenter dropped a malformed notification", metadata: [
            BusLogKey.sender: "\(sender)", BusLogKey.reason: "\(reason)",
        ])
    }

    /// Posts accepted earlier were released unsent: counted, and logged with the count.
    ///
    /// Thread-safety: any thread.
    package func transportDiscardedUnsent(count: Int) {
        guard count > 0 else { return }
        state.withLock { $0.metrics.postsDiscardedUnsent += count }
        logger.notice("BusNotificationCenter: posts accepted before the connection was lost (or its loop shut down) were discarded unsent", metadata: [
            BusLogKey.endpoint: "\(endpoint)", BusLogKey.discarded: "\(count)",
        ])
    }

    /// The connection is gone: logged once per loss, disconnection observers called.
    ///
    /// Thread-safety: the transport's loop thread.
    package func transportDisconnected() {
        let (records, first) = state.withLock { state in
            defer { state.disconnectionLogged = true }
            return (state.observations, !state.disconnectionLogged)
        }
        if first {
            logger.error("BusNotificationCenter lost its bus connection", metadata: [BusLogKey.endpoint: "\(endpoint)"])
        }
        for record in records { deliverDisconnection(to: record) }
    }

    func deliverDisconnection(to record: BusObservationRecord) {
        guard case .disconnection(let loop, let handler) = record.target, record.firstDisconnectionReport() else { return }
        run(on: loop, for: record) { handler(.disconnected) }
    }

    /// Delivers what `record` held (loop thread), in arrival order; returns how many.
    func flushHeld(_ record: BusObservationRecord) -> Int {
        record.overflowReported = false
        guard !record.held.isEmpty else { return 0 }
        let held = record.held
        record.held.removeAll()
        for envelope in held { deliver(envelope, to: record) }
        return held.count
    }

    /// Hands `envelope` to `record`'s target.
    func deliver(_ envelope: NotificationEnvelope, to record: BusObservationRecord) {
        switch record.target {
        // The two handler forms are spelled out rather than shared through a generic helper: a
        // handler passed as a generic `(Value) -> Void` is wrapped in a thunk, one allocation per
        // delivery. Inline when the loop is the current thread (the center's loop delivering to
        // itself), as `run(on:for:_:)` would, but without making a closure.
        case .handler(let loop, let handler):
            if loop.isCurrentThread {
                if record.isActive { handler(envelope.notification) }
            } else {
                run(on: loop, for: record) { handler(envelope.notification) }
            }
        case .fields(let loop, let handler):
            if loop.isCurrentThread {
                if record.isActive { handler(envelope.busNotification) }
            } else {
                run(on: loop, for: record) { handler(envelope.busNotification) }
            }
        case .observer(let loop, let box, let handler):
            run(on: loop, for: record) { [weak self] in
                guard let observer = box.object else {
                    self?.end(record)
                    return
                }
                handler(observer, envelope.notification)
            }
        case .forward(let center):
            guard record.isActive else { return }
            center.post(envelope.notification)
        case .signal, .disconnection:
            break
        }
    }

    /// Runs `body` on `loop`'s thread if `record` is still active then: inline when that is the
    /// current thread (the center's loop delivering to itself), else queued in order. A loop that
    /// has shut down refuses it: the observation could never be called again, so it ends (logged
    /// once), and the refused call is counted in ``BusNotificationCenterMetrics/refusedByShutDownLoops``.
    func run(on loop: PortRunLoop, for record: BusObservationRecord, _ body: @escaping @Sendable () -> Void) {
        if loop.isCurrentThread {
            if record.isActive { body() }
            return
        }
        let queued = loop.perform {
            guard record.isActive else { return }
            body()
        }
        if !queued { observationLoopShutDown(record, loop: loop) }
    }

    /// `record`'s loop refused a delivery because it has shut down: counted, and the observation
    /// ended (logged when this ends it).
    private func observationLoopShutDown(_ record: BusObservationRecord, loop: PortRunLoop) {
        state.withLock { $0.metrics.refusedByShutDownLoops += 1 }
        guard record.isActive else { return }
        end(record)
        logger.notice("BusNotificationCenter: an observation's loop has shut down; the observation ended", metadata: [
            BusLogKey.observation: "\(record.label)", BusLogKey.loop: "\(loop.name)",
        ])
    }
}
