import Foundation

extension StreamConnection {
    /// Closes the connection. With `afterFlushing`, it first stops reading and sends what is
    /// queued (the close follows the last byte; a peer that never reads keeps it open until it
    /// resets or the connection is closed again without flushing). Without, queued bytes are
    /// dropped and the descriptor is closed now. ``StreamConnectionEvent/closed(_:)`` (nil) is
    /// reported before the loop's next turn, not inside this call. Idempotent. A TLS connection
    /// closed with nothing dropped sends its `close_notify` first; one that drops queued bytes does
    /// not, so that its peer sees the stream cut short.
    ///
    /// Thread-safety: the loop's thread.
    public func close(afterFlushing: Bool = false) {
        checkThread("StreamConnection.close(afterFlushing:)")
        guard phase != .closed else { return }
        if afterFlushing, !outbound.isEmpty, phase == .open {
            closesAfterFlush = true
            updateInterest()
            return
        }
        finishClose(nil, reportNow: false)
    }

    /// Reports `event` to ``onEvent`` now (inside the connection's own handling, where user code
    /// may run).
    func report(_ event: StreamConnectionEvent) {
        reportDeferredEvents()
        onEvent?(self, event)
    }

    /// Reports `event` before the loop's next turn: found inside a call of the user's (a write, a
    /// close), it must not re-enter the caller's code. Events kept this way are reported in order,
    /// and before any found later: a readiness handled before the queued block runs (the peer's
    /// end, say) reports them first, so none is reported after ``StreamConnectionEvent/closed(_:)``
    /// or lost with the handlers.
    func reportLater(_ event: StreamConnectionEvent) {
        deferredEvents.append(event)
        guard deferredEvents.count == 1 else { return }
        let box = LoopConfined(self)
        _ = loop.enqueue(QueuedWork(modes: modeSet, kind: .block { box.value.reportDeferredEvents() }))
    }

    /// Reports the events ``reportLater(_:)`` kept, oldest first.
    func reportDeferredEvents() {
        while !deferredEvents.isEmpty {
            let event = deferredEvents.removeFirst()
            onEvent?(self, event)
        }
    }

    /// Ends the connection: stops watching, frees the transport, closes the descriptor, drops what
    /// is queued, and reports ``StreamConnectionEvent/closed(_:)`` with `error` (now, or before the
    /// next turn), after which the handlers are released.
    func finishClose(_ error: StreamConnectionError?, reportNow: Bool) {
        guard phase != .closed else { return }
        let wasStarting = phase == .starting
        phase = .closed
        startTimer?.invalidate()
        startTimer = nil
        source?.cancel()
        source = nil
        if let transport {
            // A clean close that drops nothing: the transport tells its peer first (TLS:
            // close_notify, one attempt), so the peer can tell it from a cut connection.
            if error == nil, !wasStarting, outbound.isEmpty, !outputShutDown, fileDescriptor >= 0 {
                _ = transport.shutdownOutput(fileDescriptor: fileDescriptor)
            }
            transport.close()
        }
        outbound.removeAll()
        if fileDescriptor >= 0 {
            System.closeDescriptor(fileDescriptor)
            fileDescriptor = -1
        }
        if let error, error != .loopShutDown, !wasStarting {
            loop.currentLogger.debug("PortRunLoop stream connection ended", metadata: [
                LogKey.loop: "\(loop.name)", LogKey.error: "\(error)",
            ])
        }
        if wasStarting {
            // Nobody was given the connection: only its opener hears of the failure.
            onRead = nil
            onEvent = nil
            return
        }
        if reportNow {
            deliverClosed(error)
        } else {
            let box = LoopConfined(self)
            let queued = loop.enqueue(QueuedWork(modes: modeSet, kind: .block { box.value.deliverClosed(error) }))
            if !queued { deliverClosed(error) } // the loop is shutting down: told now, on its thread
        }
    }

    /// Reports the close, then releases the handlers.
    private func deliverClosed(_ error: StreamConnectionError?) {
        reportDeferredEvents()
        let handler = onEvent
        onRead = nil
        onEvent = nil
        handler?(self, .closed(error))
    }
}
