import Foundation
import Logging
import Synchronization

/// One process connected to a ``PublishedMessagePort``: reads its frames on the publishing loop's
/// thread and queues its messages in the port, gives its credits back as the loop takes them, and
/// carries replies and routed messages back to it.
///
/// Credits: the connection starts with ``PublisherParameters/credits`` (the port's queue limit).
/// `outstanding` counts the peer's messages whose credit has not been sent back; a message beyond
/// the credits is a protocol violation. The loop taking a message (``messageTaken()``) counts it in
/// `taken`; the message that makes half the credits (rounded up) owed queues a flush on the loop as
/// control work, which moves the count into `toReturn` and sends everything owed by the end of
/// that batch back in one credit frame. Waiting for half the window, rather than returning each
/// batch's credits, spares a request/reply exchange a credit frame (a `send` here, a `recv` and
/// often a wake-up there) per message, and cannot stall a sender: one that has no credit left has
/// the whole window either in the port or owed, and the port's messages are taken eventually, so
/// half the window comes back.
///
/// Thread-safety: `@unchecked Sendable`. `state` is guarded by its mutex (`fd` is read there by
/// reply senders on any thread, and set to -1 by ``close(reason:)`` on the loop's thread, which
/// closes the fd after its source is cancelled); `taken` is atomic (added to by the thread of the
/// port's loop, emptied by the flush under the mutex); `takingDescriptors` is read and written
/// only by the reads on the owner thread. `peer`, `publication`, `port` and `credits`
/// are immutable; the publication is held strongly (a reply port may outlive it), a cycle its
/// unpublication breaks.
final class InboundConnection: CreditSink, @unchecked Sendable {
    let peer: CrossProcessPeer
    let publication: PublishedMessagePort
    /// The publication's port and credits, read once per frame (kept here, not reached through
    /// the publication).
    private let port: MessagePort
    private let credits: Int

    private struct State {
        var fd: Int32
        var source: FileDescriptorSource?
        var writeWatch: FileDescriptorSource?
        var outstanding = 0
        /// Credits the flush took from `taken` and has not sent yet (the peer's socket was full).
        var toReturn = 0
        /// The payload every pure signal of this peer carries (made at the first; a cycle through
        /// its credit sink that ``close(reason:)`` breaks).
        var signalPayload: MessagePort.Payload?
        /// This side's answer times: stamped on each reply or routed frame sent, read from each
        /// message frame received.
        var answers = AnswerTiming()
        /// This side announced its descriptors to the peer (before its first frame with some).
        var descriptorsAnnounced = false
    }
    private let state: TracedMutex<State>
    /// Messages the loop took since the last flush began: one atomic add per message, not a turn
    /// of the mutex (``messageTaken()``).
    private let taken = Atomic<Int>(0)
    /// The peer announced that its frames may carry descriptors (``CrossProcessFrame/Kind/descriptors``).
    /// Until it has, a spin read takes its frame with a plain `recv`. Read and written on the
    /// owner thread only (the reads of ``readFrames(atMost:)``).
    private var takingDescriptors = false

    /// The most frames read per readiness callback (the fd stays readable: the next turn goes on),
    /// so one busy peer cannot keep the loop from its other work.
    private static let framesPerTurn = 64

    /// The frame that tells a client the port was withdrawn (``close(reason:)``).
    private static let closingFrame = CrossProcessFrame(kind: .closing).encoded()

    init(fd: Int32, peer: CrossProcessPeer, publication: PublishedMessagePort) {
        self.peer = peer
        self.publication = publication
        self.port = publication.port
        self.credits = publication.parameters.credits
        self.state = TracedMutex(State(fd: fd))
    }

    var isOpen: Bool { state.withLock { $0.fd >= 0 } }

    /// Owner thread: starts reading.
    func start() throws(PortRunLoopError) {
        let fd = state.withLock { $0.fd }
        guard fd >= 0 else { return }
        let source = try publication.loop.watch(fileDescriptor: fd, for: .read, inModes: publication.modes,
                                                spinRead: { [self] in readFrames(atMost: 1) },
                                                onFailure: { [self] in socketRefused($0) },
                                                handler: { [self] _ in _ = readFrames(atMost: Self.framesPerTurn) })
        state.withLock { $0.source = source }
    }

    /// Owner thread: reads up to `frameLimit` frames, as many per system call as the publication has
    /// slots (`recvmmsg`). A call that fills fewer slots than it had found the socket drained: the
    /// batch ends without another call to learn it (the loop watches the fd level-triggered, so
    /// frames that came meanwhile are read at its next turn). The fd is read once: only this
    /// thread closes the connection (``close(reason:)``), and a frame that closes it ends the
    /// batch. The batch's messages are counted once, at its end. Returns whether it read anything
    /// (a frame, the end, or a failure that closed the connection).
    ///
    /// The source's handler reads up to ``framesPerTurn``. A loop's spin read
    /// (``FileDescriptorSource/spinRead``), made in a conversation, looks for the one request it
    /// waits for and reads one frame: a `recvmmsg` with more slots than frames waiting pays the
    /// kernel's look into the empty socket for the next slot, on every request of the round trip
    /// (Docs/Benchmarks.md, `CrossProcess.RoundTrip.Ours`), and the level-triggered source reads
    /// whatever else came at the loop's next turn.
    private func readFrames(atMost frameLimit: Int) -> Bool {
        let fd = state.withLock { $0.fd }
        guard fd >= 0 else { return false }
        let publication = self.publication
        let slots = publication.receiveBuffer
        let slotSize = publication.receiveSlotSize
        let lengths = publication.receiveLengths
        let limit = publication.options.maximumMessageSize
        let control = publication.receiveControl
        let controlSize = publication.receiveControlSize
        let descriptorCounts = publication.receiveDescriptorCounts
        let descriptorLimit = publication.options.maximumFileDescriptorsPerMessage
        var received = 0
        // How soon the exchange turns around, by the last message read (``AnswerTiming``): told to
        // the loop, which may earn its spin by it (``PortRunLoop/noteAnswer(after:)``).
        var answerGap = Double.infinity
        defer {
            if received > 0 { publication.countMessagesReceived(received) }
            if answerGap < .infinity { publication.loop.noteAnswer(after: answerGap) }
        }
        var read = 0
        while read < frameLimit {
            let wanted = min(publication.receiveSlotCount, frameLimit - read)
            // One frame from a peer that sends no descriptors: a plain `recv` into the first slot
            // (`recvmmsg` of one slot costs more per frame: Docs/Benchmarks.md,
            // `CrossProcess.RoundTrip.Ours`).
            let result = wanted == 1 && !takingDescriptors
                ? Self.receiveOne(fd, into: slots, slotSize: slotSize, lengths: lengths, descriptorCounts: descriptorCounts)
                : System.receiveFrames(fd, into: slots, slotSize: slotSize, count: wanted, lengths: lengths,
                                       control: control, controlSize: controlSize, descriptorCounts: descriptorCounts)
            switch result {
            case .wouldBlock:
                return read > 0
            case .closed:
                close(reason: .closed)
                return true
            case .failed(let code):
                close(reason: .connectionFailed("recv: \(System.Errno(code))"))
                return true
            case .truncated:
                return read > 0 // not a result of receiveFrames
            case .done(let count):
                let readAt = System.monotonicSeconds()
                // The descriptors of the frames not yet taken: closed when the batch ends early.
                var untaken = 0
                defer {
                    for index in untaken..<count where descriptorCounts[index] > 0 {
                        System.closeDescriptors(control + index * controlSize, count: Int(descriptorCounts[index]))
                    }
                }
                for index in 0..<count {
                    untaken = index + 1
                    let carried = descriptorCounts[index]
                    // Owned at once: every path below that does not queue them closes them.
                    let descriptors = carried > 0
                        ? System.takeDescriptors(control + index * controlSize, count: Int(carried)) : []
                    guard carried >= 0 else {
                        close(reason: .protocolViolation("file descriptors were lost (more than the \(descriptorLimit) allowed, or the control data was truncated)"))
                        return true
                    }
                    let length = lengths[index]
                    guard length > 0 else { close(reason: .closed); return true } // end of file
                    guard length <= limit else {
                        close(reason: .protocolViolation("a frame of \(length) bytes exceeds the maximum of \(limit)"))
                        return true
                    }
                    let bytes = UnsafeRawBufferPointer(start: slots + index * slotSize, count: length)
                    let frame: CrossProcessFrame
                    do { frame = try CrossProcessFrame.parse(bytes) } catch {
                        close(reason: .protocolViolation("malformed frame: \(error)"))
                        return true
                    }
                    if let violation = frame.descriptorViolation(received: descriptors.count, limit: descriptorLimit,
                                                                 announced: takingDescriptors, sender: "peer") {
                        close(reason: .protocolViolation(violation))
                        return true
                    }
                    if frame.kind == .descriptors {
                        takingDescriptors = true
                        continue
                    }
                    switch receive(frame, descriptors: descriptors, readAt: readAt, answerGap: &answerGap) {
                    case .closed: return true
                    case .queued: received += 1
                    case .dropped: break
                    }
                }
                read += count
                if count < wanted { return true }
            }
        }
        return true
    }

    /// ``readFrames(atMost:)``'s read of one frame without descriptors (`recv`, `MSG_TRUNC`), as
    /// ``System/receiveFrames(_:into:slotSize:count:lengths:control:controlSize:descriptorCounts:)``
    /// reports a batch of one: its real length in `lengths[0]` (more than the slot: cut short),
    /// no descriptors. A descriptor the peer sent anyway is closed by the kernel; its frame's
    /// count then disagrees, a protocol violation.
    private static func receiveOne(_ fd: Int32, into slots: UnsafeMutableRawPointer, slotSize: Int,
                                   lengths: UnsafeMutablePointer<Int>,
                                   descriptorCounts: UnsafeMutablePointer<Int32>) -> System.SocketResult {
        let result = System.receiveFrame(fd, into: UnsafeMutableRawBufferPointer(start: slots, count: slotSize))
        switch result {
        case .done(let length), .truncated(let length):
            lengths[0] = length
            descriptorCounts[0] = 0
            return .done(1)
        case .wouldBlock, .closed, .failed:
            return result
        }
    }

    /// What ``receive(_:)`` did with a frame.
    private enum Receipt { case queued, dropped, closed }

    /// Owner thread: queues a message frame in the port (dropped when the port is invalid; closed
    /// when the frame broke the protocol).
    ///
    /// A message with no components and no reply port (a pure signal) carries the connection's one
    /// ``signalPayload``: all it needs is the credit sink, so it costs no allocation.
    private func receive(_ frame: CrossProcessFrame, descriptors: [TransferredFileDescriptor], readAt: Double,
                         answerGap: inout Double) -> Receipt {
        guard frame.kind == .message else {
            close(reason: .protocolViolation("a client sent a frame of kind \(frame.kind)"))
            return .closed
        }
        let credits = self.credits
        let signal = frame.components.isEmpty && frame.flags.isEmpty && descriptors.isEmpty
        let peerAnswer = frame.answerMicroseconds // the lock's closure captures a field, not the frame
        let (withinCredits, shared, gap) = state.withLock { state -> (Bool, MessagePort.Payload?, Double) in
            guard state.outstanding < credits else { return (false, nil, .infinity) }
            state.outstanding += 1
            let gap = state.answers.read(at: readAt, peerAnswer: peerAnswer)
            guard signal else { return (true, nil, gap) }
            if state.signalPayload == nil {
                state.signalPayload = MessagePort.Payload(components: [], replyPort: nil, context: nil, creditSink: self)
            }
            return (true, state.signalPayload, gap)
        }
        answerGap = gap
        guard withinCredits else {
            close(reason: .protocolViolation("a message beyond the \(credits) credits granted"))
            return .closed
        }
        let payload: MessagePort.Payload
        if let shared {
            payload = shared
        } else {
            var replyAddress: ReplyAddress?
            if frame.flags.contains(.request) {
                replyAddress = .inbound(InboundRoute(connection: self, route: .reply(frame.firstID)))
            } else if frame.flags.contains(.replyRoute) {
                replyAddress = .inbound(InboundRoute(connection: self, route: .routed(frame.secondID)))
            }
            payload = MessagePort.Payload(components: frame.components, replyAddress: replyAddress, context: nil,
                                          creditSink: self, fileDescriptors: descriptors)
        }
        return port.inject(msgid: frame.msgid, payload: payload) ? .queued : .dropped
    }

    /// The port's loop thread: the loop took one of this peer's messages; its credit goes back
    /// with the flush of the batch in which half the window is owed.
    func messageTaken() {
        // Exactly one message reaches the threshold between two flushes (the flush empties the
        // count): that one queues the flush. A loop that refuses it has shut down, and with it
        // the connection.
        guard taken.wrappingAdd(1, ordering: .relaxed).newValue == (credits + 1) / 2 else { return }
        // Queued (never run inline): it runs after the batch being delivered, so one frame carries
        // the whole batch's credits.
        _ = publication.loop.enqueue(QueuedWork(modes: .all, kind: .block { [self] in flushCredits() }))
    }

    /// Sends the credits taken so far back in one frame. When the peer's socket is full (it is not
    /// reading), waits for it to become writable on the loop and tries again then. Credits that
    /// cannot go back (the send failed, or the socket cannot be watched for room) would leave the
    /// peer waiting for them for ever: the connection is closed instead, and its peer sees the end.
    private func flushCredits() {
        let failure = state.withLock { state -> String? in
            state.toReturn += taken.exchange(0, ordering: .relaxed)
            guard state.fd >= 0, state.toReturn > 0 else { return nil }
            let count = state.toReturn
            let bytes = CrossProcessFrame(kind: .credit, firstID: UInt64(count)).encoded()
            switch bytes.withUnsafeBytes({ System.sendFrame(state.fd, $0) }) {
            case .done:
                state.toReturn = 0
                state.outstanding -= count
            case .wouldBlock:
                guard state.writeWatch == nil else { return nil }
                do throws(PortRunLoopError) {
                    state.writeWatch = try watchForRoom(fd: state.fd)
                } catch .loopShutDown {
                    return nil // the shutdown closes the connection as unpublished
                } catch {
                    return "the loop could not watch its socket for room to return credits: \(error)"
                }
            case .failed(let code):
                return "sending credits back: \(System.Errno(code))"
            case .closed, .truncated:
                break // the read side sees the end and closes the connection
            }
            return nil
        }
        if let failure { close(reason: .connectionFailed(failure)) }
    }

    /// Owner thread: the loop would not watch the connection's socket, when it was accepted or
    /// later (a re-arm): the connection ends, rather than wait for reads or room that never come.
    func socketRefused(_ error: PortRunLoopError) {
        close(reason: .connectionFailed("the loop could not watch its socket: \(error)"))
    }

    /// Watches the fd until it is writable, then flushes the credits again (with the lock held).
    private func watchForRoom(fd: Int32) throws(PortRunLoopError) -> FileDescriptorSource {
        try publication.loop.watch(fileDescriptor: fd, for: .write, inModes: publication.modes,
                                   onFailure: { [self] in socketRefused($0) }) { [self] _ in
            let watch = state.withLock { state in
                defer { state.writeWatch = nil }
                return state.writeWatch
            }
            watch?.cancel()
            flushCredits()
        }
    }

    /// Any thread: ``sendFrame(_:descriptors:before:)`` for `frame` (of `size` bytes), encoded in a
    /// temporary buffer (on the stack when small: a reply costs no allocation for its bytes).
    func sendFrame(_ frame: CrossProcessFrame, size: Int, descriptors: [Int32], before deadline: Double) -> Bool {
        withUnsafeTemporaryAllocation(byteCount: size, alignment: 8) { buffer in
            let length = frame.encode(into: buffer)
            return sendFrame(UnsafeRawBufferPointer(rebasing: buffer[0..<length]), descriptors: descriptors, before: deadline,
                             answerTimeAt: buffer.baseAddress! + CrossProcessFrame.answerOffset)
        }
    }

    /// Any thread: sends a reply or routed frame, waiting for room in the socket until the monotonic
    /// `deadline`. False when the connection is closed or stayed full. `answerTimeAt`: where the
    /// frame's answer time goes, written as it is sent (``AnswerTiming``); nil for a frame that
    /// answers nothing (credits, the closing frame).
    func sendFrame(_ bytes: UnsafeRawBufferPointer, descriptors: [Int32] = [], before deadline: Double,
                   answerTimeAt answerSlot: UnsafeMutableRawPointer? = nil) -> Bool {
        while true {
            let (fd, result) = state.withLock { state -> (Int32, System.SocketResult) in
                guard state.fd >= 0 else { return (-1, .closed) }
                if !descriptors.isEmpty,
                   let failed = CrossProcessFrame.announceDescriptors(on: state.fd, announced: &state.descriptorsAnnounced) {
                    return (state.fd, failed)
                }
                if let answerSlot {
                    let answer = state.answers.answerTime(sendingAt: System.monotonicSeconds())
                    answerSlot.storeBytes(of: answer.littleEndian, as: UInt32.self)
                }
                return (state.fd, descriptors.isEmpty ? System.sendFrame(state.fd, bytes)
                    : descriptors.withUnsafeBufferPointer { System.sendFrame(state.fd, bytes, descriptors: $0) })
            }
            switch result {
            case .done:
                PortRunLoop.noteMessageSentFromCurrentThread() // a reply: its sender may ask again
                return true
            case .wouldBlock:
                guard System.monotonicSeconds() < deadline,
                      !System.poll(fd, for: .writable, untilMonotonic: deadline).isEmpty else { return false }
            case .closed, .truncated: return false
            case .failed(let code):
                publication.logger.warning("MessagePort could not send a frame to a peer", metadata: [
                    LogKey.portName: "\(publication.name)", LogKey.peer: "\(peer)",
                    LogKey.error: "\(System.Errno(code))"])
                return false
            }
        }
    }

    /// Owner thread (or any thread once the loop is shut down): ends the connection. Idempotent.
    func close(reason: CrossProcessPeer.DisconnectReason) {
        let (fd, source, writeWatch) = state.withLock { state in
            defer { state.fd = -1; state.source = nil; state.writeWatch = nil; state.signalPayload = nil }
            return (state.fd, state.source, state.writeWatch)
        }
        guard fd >= 0 else { return }
        source?.cancel()
        writeWatch?.cancel()
        if reason == .unpublished {
            // Tells the client the publisher withdrew the port (not died). Best effort: a client
            // whose socket is full of unread frames sees only the end (``MessagePort/InvalidationReason/peerDied``).
            _ = Self.closingFrame.withUnsafeBytes { System.sendFrame(fd, $0) }
        }
        // Counted (and reported) before the peer can see the end: whoever sees it finds it counted.
        publication.connectionEnded(self, reason: reason)
        System.closeDescriptor(fd)
    }
}
