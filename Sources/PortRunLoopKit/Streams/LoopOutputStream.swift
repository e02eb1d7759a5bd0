import Foundation

/// The writing side of a stream pair (`NSOutputStream`'s shape): ``write(_:maxLength:)`` hands
/// bytes to the pair's connection, which sends them as the socket drains.
///
/// Its delegate gets `.openCompleted`, then `.hasSpaceAvailable`. After a `.hasSpaceAvailable` no
/// other is sent until the client has written; a write that leaves room is followed by another
/// on a later turn, and one that fills the connection's queue past its high-water mark
/// (``StreamConnection/Options/highWaterMark``) by another once the queue drains below the
/// low-water mark. A writer that writes on each `.hasSpaceAvailable` thus keeps the queue between
/// the two marks, whatever the peer's pace.
///
/// Thread-safety: not `Sendable`; the stream's loop thread (see ``LoopStream``).
public final class LoopOutputStream: LoopStream {
    /// A `.hasSpaceAvailable` was delivered and the client has not written since.
    private var spaceAvailableDelivered = false
    private var endDelivered = false

    /// Hands up to `len` bytes of `buffer` to the connection (at most its high-water mark's worth
    /// per call), which sends them in order, straight to the kernel when nothing is queued.
    ///
    /// - Returns: the number of bytes accepted, all of which will be sent unless the connection
    ///   fails; 0 when there is no space (``hasSpaceAvailable`` is false: wait for
    ///   `.hasSpaceAvailable`) or the stream is still `.opening`; -1 when the stream is not open,
    ///   closed, or failed (``LoopStream/streamError``, which a write that finds the peer gone sets
    ///   before the loop's next turn).
    ///
    /// Thread-safety: the stream's loop thread.
    public func write(_ buffer: UnsafePointer<UInt8>, maxLength len: Int) -> Int {
        checkThread("LoopOutputStream.write(_:maxLength:)")
        Misuse.check(len >= 0, "LoopOutputStream.write(_:maxLength:): maxLength is negative (\(len))")
        switch status {
        case .open: break
        case .opening: return 0
        default: return -1
        }
        guard let connection = socket.connection, connection.isOpen else { return -1 }
        spaceAvailableDelivered = false
        defer { requestDelivery() }
        guard connection.isWritable else { return 0 }
        let count = min(len, max(connection.options.highWaterMark, 4096))
        guard count > 0 else { return 0 }
        guard connection.write(UnsafeRawBufferPointer(start: buffer, count: count)) else { return -1 }
        return count
    }

    /// True when the stream is open and a write would accept bytes (the connection's queue is
    /// below its high-water mark, or drained below the low one since it passed it).
    ///
    /// Thread-safety: the stream's loop thread.
    public var hasSpaceAvailable: Bool {
        checkThread("LoopOutputStream.hasSpaceAvailable")
        return status == .open && socket.connection?.isWritable == true
    }

    /// Bytes accepted by ``write(_:maxLength:)`` and not yet handed to the kernel.
    ///
    /// Thread-safety: the stream's loop thread.
    public var queuedByteCount: Int {
        checkThread("LoopOutputStream.queuedByteCount")
        return socket.connection?.queuedByteCount ?? 0
    }

    // MARK: From the socket

    /// The connection's queue passed a water mark.
    func writabilityChanged() {
        requestDelivery()
    }

    // MARK: LoopStream's hooks

    override func socketClosed() {
        guard status == .open else { return }
        status = .atEnd
        requestDelivery()
    }

    override func didClose() {
        socket.outputClosed()
    }

    override func nextEvent() -> Stream.Event? {
        if let event = super.nextEvent() { return event }
        if status == .open, !spaceAvailableDelivered, socket.connection?.isWritable == true { return .hasSpaceAvailable }
        if status == .atEnd, !endDelivered { return .endEncountered }
        return nil
    }

    override func delivering(_ event: Stream.Event) {
        super.delivering(event)
        if event == .hasSpaceAvailable { spaceAvailableDelivered = true }
        if event == .endEncountered { endDelivered = true }
    }

    deinit {
        socket.streamReleased(input: false)
    }
}
