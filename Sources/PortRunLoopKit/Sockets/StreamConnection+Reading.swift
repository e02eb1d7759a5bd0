extension StreamConnection {
    /// Reads at most this many times per readiness: a connection that always has input does not
    /// keep the loop from its other sources (level-triggered, it is reported again next turn).
    static let readsPerReadiness = 4
    /// The same for a transport's reads, each at most one TLS record (16 KiB).
    static let transportReadsPerReadiness = 16

    /// The fd source's handler: the socket is ready for `ready`.
    func handleReady(_ ready: FileDescriptorSource.Events) {
        switch phase {
        case .closed: return
        case .starting: advanceStart()
        case .open:
            // Flushed when the socket has room, or when the transport waits to read before it
            // can write (TLS); a readable-only turn with bytes queued makes no failing send.
            if !outbound.isEmpty || (outputShutdownRequested && !outputShutDown),
               ready.contains(.write) || !writeWaitsFor.contains(.write) { flush() }
            if phase == .open, !isReadingPaused, !inputEnded, !closesAfterFlush { readAvailable() }
            updateInterest()
        }
    }

    /// Reads what the socket holds into the loop's read buffer and hands it to ``onRead``, until
    /// the socket is empty, the handler paused or closed the connection, or the turn's share of
    /// reads is used.
    private func readAvailable() {
        loop.streamReadBuffer.withBuffer { buffer in
            for _ in 0..<(transport == nil ? Self.readsPerReadiness : Self.transportReadsPerReadiness) {
                guard phase == .open, !isReadingPaused, !inputEnded, !closesAfterFlush else { return }
                let result: StreamTransportIO
                if let transport {
                    result = transport.read(fileDescriptor: fileDescriptor, into: buffer)
                } else {
                    result = switch System.streamReceive(fileDescriptor, into: buffer) {
                    case .done(let count): .done(count)
                    case .wouldBlock: .wouldBlock(.read)
                    case .end: .end
                    case .reset: .failed(.peerReset)
                    case .failed(let code): .failed(.system(call: "recv", errno: code))
                    }
                }
                switch result {
                case .done(let count):
                    onRead?(self, UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                    // A short read of the socket emptied it: asking again would only find EAGAIN.
                    // A transport's read is short by nature (TLS: one record of at most 16 KiB),
                    // so it reads on, within the turn's share, until it would block.
                    if count < buffer.count, transport == nil { return }
                case .wouldBlock(let waitsFor):
                    readWaitsFor = waitsFor
                    return
                case .end:
                    endOfInput()
                    return
                case .failed(let error):
                    finishClose(error, reportNow: true)
                    return
                }
            }
        }
        readBufferedInputLater()
    }

    /// Bytes a transport holds already decrypted (``StreamTransport/hasBufferedInput``) are
    /// announced by no readiness: when a turn's share of reads ended with some left, or reading
    /// resumes with some, they are read by a block queued for the next turn.
    func readBufferedInputLater() {
        guard let transport, phase == .open, !isReadingPaused, !inputEnded, !closesAfterFlush,
              transport.hasBufferedInput else { return }
        let box = LoopConfined(self)
        _ = loop.enqueue(QueuedWork(modes: modeSet, kind: .block { box.value.handleReady(.read) }))
    }

    /// The peer shut its output down.
    private func endOfInput() {
        inputEnded = true
        report(.inputEnded)
        guard phase == .open else { return }
        if !options.allowsHalfClosure {
            close(afterFlushing: true)
        } else if outputShutDown {
            finishClose(nil, reportNow: true)
        }
    }

    /// Moves the transport's opening on; tells ``whenStarted`` once it completes or fails.
    func advanceStart() {
        guard phase == .starting, let transport else { return }
        switch transport.start(fileDescriptor: fileDescriptor) {
        case .done:
            phase = .open
            startTimer?.invalidate()
            startTimer = nil
            readWaitsFor = .read
            updateInterest()
            let started = whenStarted
            whenStarted = nil
            started?(.success(self))
            // Application bytes that came with the handshake's last flight are decrypted already.
            readBufferedInputLater()
        case .wouldBlock(let waitsFor):
            readWaitsFor = waitsFor
            updateInterest()
        case .end:
            failStart(.tls(TLSFailure(.uncleanShutdown, reason: "the peer closed the connection during the handshake")))
        case .failed(let error):
            failStart(error)
        }
    }

    /// The opening failed (or timed out): the connection closes, and only ``whenStarted`` hears
    /// of it (no user handler was set on a connection nobody was given).
    func failStart(_ error: StreamConnectionError) {
        guard phase == .starting else { return }
        let started = whenStarted
        whenStarted = nil
        finishClose(error, reportNow: false)
        started?(.failure(error))
    }
}

extension StreamConnection {
    /// Closes a connection whose opening outlasts ``Options/handshakeTimeout``.
    func armStartTimeout() {
        guard phase == .starting, startTimer == nil else { return }
        let box = LoopConfined(self)
        let timer = RunLoopTimer(after: options.handshakeTimeout) { _ in
            let connection = box.value
            let endpoint = connection.remoteEndpoint ?? .unix(path: "")
            connection.failStart(.timedOut(endpoint))
        }
        startTimer = timer
        for mode in modes { loop.add(timer, forMode: mode) }
    }
}
