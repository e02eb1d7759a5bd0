import Foundation

extension StreamConnection {
    /// Sends `bytes`: straight to the kernel when nothing is queued, the rest (all of it behind
    /// queued bytes) into the outbound queue, sent in order as the socket drains. A write that
    /// takes the queue past ``Options/highWaterMark`` reports
    /// ``StreamConnectionEvent/writabilityChanged(_:)`` false before it returns.
    ///
    /// - Returns: false, sending nothing, when the connection is closed, closing, or its output
    ///   was shut down; or when the write would take the queue past ``Options/outboundLimit``, which
    ///   closes the connection with ``StreamConnectionError/outboundLimitExceeded(limit:)``.
    ///
    /// A peer's reset found by the write closes the connection with
    /// ``StreamConnectionError/peerReset``, reported before the loop's next turn (not inside this
    /// call).
    ///
    /// Thread-safety: the loop's thread.
    @discardableResult
    public func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        checkThread("StreamConnection.write(_:)")
        guard phase != .closed, !closesAfterFlush, !outputShutdownRequested else { return false }
        guard !bytes.isEmpty else { return true }
        var rest = bytes
        if outbound.isEmpty, phase == .open {
            switch send(bytes) {
            case .done(let count):
                if count == bytes.count { return true }
                rest = UnsafeRawBufferPointer(rebasing: bytes[count...])
            case .wouldBlock(let waitsFor):
                writeWaitsFor = waitsFor
            case .end:
                break
            case .failed(let error):
                finishClose(error, reportNow: false)
                return false
            }
        }
        guard outbound.count + rest.count <= options.outboundLimit else {
            finishClose(.outboundLimitExceeded(limit: options.outboundLimit), reportNow: false)
            return false
        }
        let wasEmpty = outbound.isEmpty
        outbound.append(rest)
        if wasEmpty { updateInterest() }
        if isWritable, outbound.count > options.highWaterMark {
            isWritable = false
            report(.writabilityChanged(false))
        }
        return true
    }

    /// ``write(_:)-(UnsafeRawBufferPointer)`` of an array's bytes.
    ///
    /// Thread-safety: the loop's thread.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { write($0) }
    }

    /// ``write(_:)-(UnsafeRawBufferPointer)`` of a string's UTF-8 bytes.
    ///
    /// Thread-safety: the loop's thread.
    @discardableResult
    public func write(_ string: String) -> Bool {
        var string = string
        return string.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }

    /// Sends everything queued, then shuts the output down (`shutdown(SHUT_WR)`; TLS sends its
    /// `close_notify` first): the peer reads end of stream, and may go on sending. Reports
    /// ``StreamConnectionEvent/outputShutDown``; if input had ended too, the connection closes.
    /// Later writes return false.
    ///
    /// Thread-safety: the loop's thread.
    public func shutdownOutput() {
        checkThread("StreamConnection.shutdownOutput()")
        guard phase != .closed, !outputShutdownRequested else { return }
        outputShutdownRequested = true
        if outbound.isEmpty, phase == .open { completeOutputShutdown(reportNow: false) }
        updateInterest()
    }

    /// One write of `bytes` through the transport or the socket.
    private func send(_ bytes: UnsafeRawBufferPointer) -> StreamTransportIO {
        if let transport { return transport.write(fileDescriptor: fileDescriptor, bytes) }
        return switch System.streamSend(fileDescriptor, bytes) {
        case .done(let count): .done(count)
        case .wouldBlock: .wouldBlock(.write)
        case .end, .reset: .failed(.peerReset)
        case .failed(let code): .failed(.system(call: "send", errno: code))
        }
    }

    /// Sends what the queue holds until it is empty or the socket is full; then the writability,
    /// a shutdown waiting for the queue, or a close waiting for it.
    func flush() {
        while !outbound.isEmpty, phase == .open {
            let result = outbound.withQueuedBytes { send($0) }
            switch result {
            case .done(let count):
                outbound.consume(count)
            case .wouldBlock(let waitsFor):
                writeWaitsFor = waitsFor
                return
            case .end:
                return
            case .failed(let error):
                finishClose(error, reportNow: true)
                return
            }
        }
        guard phase == .open else { return }
        writeWaitsFor = .write
        if !isWritable, outbound.count <= options.lowWaterMark {
            isWritable = true
            report(.writabilityChanged(true))
            guard phase == .open else { return }
        }
        guard outbound.isEmpty else { return }
        if closesAfterFlush {
            finishClose(nil, reportNow: true)
        } else if outputShutdownRequested, !outputShutDown {
            completeOutputShutdown(reportNow: true)
        }
    }

    /// Shuts the output down now (the queue is empty).
    private func completeOutputShutdown(reportNow: Bool) {
        let result: StreamTransportIO
        if let transport {
            result = transport.shutdownOutput(fileDescriptor: fileDescriptor)
        } else if let error = System.shutdownOutput(fileDescriptor) {
            result = error.code == ENOTCONN ? .failed(.peerReset) : .failed(.system(call: "shutdown", errno: error.code))
        } else {
            result = .done(0)
        }
        switch result {
        case .done, .end:
            outputShutDown = true
            if reportNow { report(.outputShutDown) } else { reportLater(.outputShutDown) }
            if inputEnded, phase == .open { finishClose(nil, reportNow: reportNow) }
        case .wouldBlock(let waitsFor):
            writeWaitsFor = waitsFor // a TLS close_notify that did not fit: sent at the next flush
        case .failed(let error):
            finishClose(error, reportNow: reportNow)
        }
    }
}
