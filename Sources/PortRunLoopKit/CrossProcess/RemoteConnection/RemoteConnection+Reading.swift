import Logging

extension RemoteConnection {
    /// With the lock held: reads and handles every frame waiting, without blocking, or, given a
    /// request's `wait`, only up to the frame that completes it.
    ///
    /// Ending at a request's reply spares the round trip the `recv` that would find the socket
    /// empty. Frames that came after the reply (credits, routed messages, other replies) stay in
    /// the socket for the next look, and every reader that needs them looks: a send without a
    /// credit drains before it waits, a waiting request polls the socket (readable at once), and a
    /// loop's read source is level-triggered, so a `readingOn:` loop reads them at its next turn.
    /// Returns whether it read anything (a frame, or the end).
    @discardableResult
    func drainFrames(stoppingAt wait: ReplyWait? = nil) -> Bool {
        var read = false
        while ended == nil, fd >= 0, !(wait?.isComplete ?? false) {
            var descriptorCount: Int32 = 0
            // Until the publisher announces descriptors, a plain `recv`: `recvmsg` costs more per
            // frame, with or without a control buffer (Docs/Benchmarks.md,
            // `CrossProcess.RoundTrip.Ours`); a descriptor sent anyway is closed by the kernel,
            // its frame then refused below.
            let result = takingDescriptors
                ? System.receiveFrame(fd, into: receiveBuffer, control: receiveControl, descriptorCount: &descriptorCount)
                : System.receiveFrame(fd, into: receiveBuffer)
            // Owned at once: every path below that does not hand them on closes them.
            let descriptors = descriptorCount > 0
                ? System.takeDescriptors(receiveControl.baseAddress!, count: Int(descriptorCount)) : []
            guard descriptorCount >= 0 else {
                protocolViolation("file descriptors were lost (the control data was truncated)")
                return true
            }
            switch result {
            case .wouldBlock:
                return read
            case .closed:
                markEnded(.peerDied, reason: .peerDied)
            case .failed(let code):
                connectionFailed(code)
            case .truncated(let length):
                protocolViolation("a frame of \(length) bytes exceeds the maximum of \(options.maximumMessageSize)")
            case .done(let length) where length > options.maximumMessageSize:
                protocolViolation("a frame of \(length) bytes exceeds the maximum of \(options.maximumMessageSize)")
            case .done(let length):
                let frame: CrossProcessFrame
                do { frame = try CrossProcessFrame.parse(UnsafeRawBufferPointer(rebasing: receiveBuffer[0..<length])) } catch {
                    protocolViolation("malformed frame: \(error)")
                    read = true
                    continue
                }
                if let violation = frame.descriptorViolation(received: descriptors.count,
                                                             limit: options.maximumFileDescriptorsPerMessage,
                                                             announced: takingDescriptors, sender: "publisher") {
                    protocolViolation(violation)
                    return true
                }
                handle(frame, descriptors: descriptors)
            }
            read = true
        }
        return read
    }

    private func handle(_ frame: CrossProcessFrame, descriptors: [TransferredFileDescriptor]) {
        if frame.kind == .reply || frame.kind == .routed {
            lastAnswerGap = answers.read(at: System.monotonicSeconds(), peerAnswer: frame.answerMicroseconds)
        }
        switch frame.kind {
        case .credit:
            credits += Int(frame.firstID)
            if credits > parameters.credits { protocolViolation("more credits returned than granted") }
            resumeRoomWaits(forRoomToo: false)
        case .reply:
            if let wait = requests[id: frame.firstID], wait.reply == nil {
                wait.reply = ReplyWait.Reply(msgid: frame.msgid, components: frame.components, descriptors: descriptors)
                wait.answerGap = lastAnswerGap
                finish(wait)
            } else {
                dropped += 1 // its request gave up (receive timeout)
            }
        case .routed:
            guard let port = routes[frame.firstID],
                  port.send(before: .distantPast, msgid: frame.msgid, components: frame.components, context: CallerContext.capture(),
                            descriptors: descriptors) else {
                dropped += 1
                logger.notice("MessagePort dropped a message for a reply port (unknown, invalid or full)", metadata: [
                    LogKey.portName: "\(name)"])
                return
            }
        case .message:
            protocolViolation("the publisher sent a message frame")
        case .closing:
            markEnded(.invalidPort, reason: .publisherWithdrew)
        case .descriptors:
            takingDescriptors = true
        }
    }
}
