import Foundation
import Logging

extension RemoteConnection {
    /// Sends a message frame with these fields (and, for a reply port, its route), spending a
    /// credit; waits for a credit or room in the socket until `deadline`. The frame is written from
    /// the fields, with no ``CrossProcessFrame`` made (no copy of `components` to retain and
    /// release), into the connection's send buffer, or, for a frame larger than that, a temporary
    /// one (`withUnsafeTemporaryAllocation`, as ``InboundConnection`` does for replies).
    ///
    /// `now`: the caller's reading of the clock, used for the frame's answer time on the first
    /// try (nil: read here). Returns when the frame went out: that reading, or a later one when
    /// the send had to wait.
    func send(flags: CrossProcessFrame.Flags, msgid: UInt32, firstID: UInt64, components: [Data],
                      replyPort: MessagePort?, descriptors: [Int32],
                      before deadline: Double, now: Double?) -> Result<Double, CrossProcessPortError> {
        let size = CrossProcessFrame.encodedSize(of: components)
        let limit = parameters.maximumFrameSize
        guard size <= limit else { return .failure(.messageTooLarge(size: size, limit: limit)) }
        if !descriptors.isEmpty, descriptors.count > options.maximumFileDescriptorsPerMessage {
            return .failure(.tooManyFileDescriptors(count: descriptors.count, limit: options.maximumFileDescriptorsPerMessage))
        }
        if let replyPort {
            Misuse.check(replyPort.remote == nil,
                         "MessagePort.send(before:msgid:components:from:): the reply port of a message to another process must be a local port")
        }
        mutex.lock()
        defer { unlockReportingEnd() }
        var clockReading = now
        while true {
            // The caller's reading serves the first try only: every later one follows a wait.
            let tryStart = clockReading.take()
            if let ended { return .failure(ended) }
            if credits == 0 && !isReading {
                drainFrames()
                if let ended { return .failure(ended) } // the drain found the end
            }
            if credits > 0 {
                let route = replyPort.map(routeID(for:)) ?? 0
                let frameFlags = route == 0 ? flags : flags.union(.replyRoute)
                let descriptorCount = UInt8(truncatingIfNeeded: descriptors.count)
                let sendingAt = tryStart ?? System.monotonicSeconds()
                let answer = answers.answerTime(sendingAt: sendingAt)
                let fd = self.fd
                // Encodes the frame into `buffer` and sends it.
                func send(in buffer: UnsafeMutableRawBufferPointer) -> System.SocketResult {
                    let length = CrossProcessFrame.encode(
                        kind: .message, flags: frameFlags, msgid: msgid, firstID: firstID, secondID: route,
                        descriptorCount: descriptorCount, answerMicroseconds: answer, components: components,
                        into: buffer)
                    let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<length])
                    return descriptors.isEmpty ? System.sendFrame(fd, bytes)
                        : descriptors.withUnsafeBufferPointer { System.sendFrame(fd, bytes, descriptors: $0) }
                }
                let announcementFailed = descriptors.isEmpty ? nil
                    : CrossProcessFrame.announceDescriptors(on: fd, announced: &descriptorsAnnounced)
                let result = announcementFailed ?? (size <= sendBuffer.count
                    ? send(in: sendBuffer)
                    : withUnsafeTemporaryAllocation(byteCount: size, alignment: 8) { send(in: $0) })
                switch result {
                case .done:
                    credits -= 1
                    PortRunLoop.noteMessageSentFromCurrentThread() // the peer may well answer
                    return .success(sendingAt)
                case .wouldBlock:
                    // The socket is full (large frames): wait for room, without the lock.
                    let fd = self.fd
                    polling += 1
                    unlockResumingTasks()
                    let ready = System.monotonicSeconds() < deadline
                        ? System.poll(fd, for: .writable, untilMonotonic: deadline) : []
                    mutex.lock()
                    polling -= 1
                    closeIfEnded()
                    if let ended { return .failure(ended) }
                    if ready.isEmpty { return .failure(.sendTimedOut) }
                case .closed:
                    markEnded(.peerDied, reason: .peerDied)
                case .failed(let code):
                    logger.warning("MessagePort send to another process failed", metadata: [
                        LogKey.portName: "\(name)", LogKey.error: "\(System.Errno(code))"])
                    return .failure(.systemCallFailed("send", errno: code))
                case .truncated:
                    return .failure(.systemCallFailed("send", errno: 0))
                }
            } else if !waitForFrames(until: deadline) {
                return .failure(.sendTimedOut)
            }
        }
    }

    /// With the lock held: the route id of a local reply port.
    private func routeID(for port: MessagePort) -> UInt64 {
        if let id = routeIDs[ObjectIdentifier(port)] { return id }
        for (id, old) in routes where !old.isValid {
            routes[id] = nil
            routeIDs[ObjectIdentifier(old)] = nil
        }
        let id = nextRouteID
        nextRouteID += 1
        routes[id] = port
        routeIDs[ObjectIdentifier(port)] = id
        return id
    }
}
