import Foundation

/// The reading side of a stream pair (`NSInputStream`'s shape): bytes the pair's connection
/// reads wait in the stream's buffer until ``read(_:maxLength:)`` takes them.
///
/// Its delegate gets `.openCompleted`, then `.hasBytesAvailable` when bytes are buffered. After a
/// `.hasBytesAvailable` no other is sent until the client has read (CFStream's rule: a delegate
/// that does not read is not called again and again); a read that leaves bytes buffered is
/// followed by another on a later turn. Once the peer's end of stream is reached and everything
/// before it read, the status is `.atEnd` and `.endEncountered` is sent.
///
/// The buffer holds a bounded amount (256 KiB; a bound pair's buffer size): past it the
/// connection stops reading, and the peer's writes wait, until the client reads.
///
/// Thread-safety: not `Sendable`; the stream's loop thread (see ``LoopStream``).
public final class LoopInputStream: LoopStream {
    /// Bytes read from the connection and not yet from the stream.
    private var buffered = ByteQueue()
    private var peerEnded = false
    private var readingPaused = false
    /// A `.hasBytesAvailable` was delivered and the client has not read since.
    private var bytesAvailableDelivered = false
    private var endDelivered = false

    /// Copies up to `len` buffered bytes into `buffer`.
    ///
    /// - Returns: the number of bytes copied; 0 when nothing is buffered (at the end of the
    ///   stream, status `.atEnd`; while the stream is `.opening` or `.open` there is just nothing
    ///   yet, where Cocoa's read would block); -1 when the stream is not open, closed, or failed
    ///   (``LoopStream/streamError``).
    ///
    /// Thread-safety: the stream's loop thread.
    public func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        checkThread("LoopInputStream.read(_:maxLength:)")
        Misuse.check(len >= 0, "LoopInputStream.read(_:maxLength:): maxLength is negative (\(len))")
        switch status {
        case .open: break
        case .opening, .atEnd: return 0
        default: return -1
        }
        bytesAvailableDelivered = false
        let count = min(len, buffered.count)
        if count > 0 {
            buffered.withQueuedBytes { queued in
                UnsafeMutableRawBufferPointer(start: buffer, count: count).copyMemory(from: UnsafeRawBufferPointer(rebasing: queued[0..<count]))
            }
            buffered.consume(count)
        }
        if readingPaused, buffered.count <= socket.inputLimit / 2 {
            readingPaused = false
            socket.resumeReading()
        }
        statusMayHaveChanged()
        requestDelivery()
        return count
    }

    /// True when the stream is open and bytes are buffered (a read returns more than 0).
    ///
    /// Thread-safety: the stream's loop thread.
    public var hasBytesAvailable: Bool {
        checkThread("LoopInputStream.hasBytesAvailable")
        return status == .open && !buffered.isEmpty
    }

    /// Bytes buffered now.
    ///
    /// Thread-safety: the stream's loop thread.
    public var bufferedByteCount: Int {
        checkThread("LoopInputStream.bufferedByteCount")
        return buffered.count
    }

    // MARK: From the socket

    /// The connection read `bytes`.
    func received(_ bytes: UnsafeRawBufferPointer) {
        guard status != .closed, status != .error else { return }
        buffered.append(bytes)
        if !readingPaused, buffered.count >= socket.inputLimit {
            readingPaused = true
            socket.pauseReading()
        }
        requestDelivery()
    }

    /// The peer shut its output down.
    func inputEnded() {
        peerEnded = true
        statusMayHaveChanged()
        requestDelivery()
    }

    // MARK: LoopStream's hooks

    override func socketClosed() { inputEnded() }

    override var acceptsFailure: Bool { !peerEnded }

    override func statusMayHaveChanged() {
        if status == .open, peerEnded, buffered.isEmpty { status = .atEnd }
    }

    override func didClose() {
        buffered.removeAll()
        socket.inputClosed()
    }

    override func nextEvent() -> Stream.Event? {
        if let event = super.nextEvent() { return event }
        if status == .open, !buffered.isEmpty, !bytesAvailableDelivered { return .hasBytesAvailable }
        if status == .atEnd, !endDelivered { return .endEncountered }
        return nil
    }

    override func delivering(_ event: Stream.Event) {
        super.delivering(event)
        if event == .hasBytesAvailable { bytesAvailableDelivered = true }
        if event == .endEncountered { endDelivered = true }
    }

    deinit {
        socket.streamReleased(input: true)
    }
}
