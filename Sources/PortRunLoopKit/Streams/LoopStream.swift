import Foundation

/// One direction of a stream socket in `NSStream`'s shape: opened, scheduled in a loop's modes,
/// and reporting to a delegate. The base of ``LoopInputStream`` and ``LoopOutputStream``, which
/// come in pairs from ``getStreamsToHost(withName:port:inputStream:outputStream:)``,
/// ``getStreamsToUnixSocket(atPath:inputStream:outputStream:)``,
/// ``getStreams(to:options:timeout:inputStream:outputStream:)`` or
/// ``getBoundStreams(withBufferSize:inputStream:outputStream:)``.
///
/// ```swift
/// var input: LoopInputStream?
/// var output: LoopOutputStream?
/// LoopStream.getStreamsToHost(withName: "example.org", port: 80, inputStream: &input, outputStream: &output)
/// for stream in [input!, output!] as [LoopStream] {
///     stream.delegate = self
///     stream.schedule(in: PortRunLoop.current, forMode: .default)
///     stream.open()
/// }
/// ```
///
/// A pair is a ``StreamConnection`` underneath: the connect, its deadline, the buffering and the
/// socket options are the connection's. The pair's socket is served (connected, read, written)
/// in the modes its streams are scheduled in when the first of them opens (the common modes if
/// none): schedule before opening, as Apple advises. Events reach the delegate only during runs
/// of the modes the stream is scheduled in *now*; events found while it is scheduled nowhere wait
/// until it is scheduled again.
///
/// **Not scheduled.** A stream opened without being scheduled binds to the calling thread's loop
/// (``PortRunLoop/current``) and gets no events: its owner polls ``streamStatus``,
/// ``LoopInputStream/hasBytesAvailable`` and ``LoopOutputStream/hasSpaceAvailable`` between runs
/// of that loop's common modes, in which the socket is then served. Reads and writes never block
/// (Cocoa's would): a read returns what is buffered, a write what was accepted.
///
/// Thread-safety: not `Sendable`. A stream belongs to the thread of its loop (the loop of its
/// first ``schedule(in:forMode:)`` or ``open()``; both streams of a pair share it): every member
/// is used there (a precondition checks it), and the delegate is called there.
public class LoopStream {
    /// The delegate, held weakly (as Cocoa holds it). nil: events are dropped.
    ///
    /// Thread-safety: the stream's loop thread.
    public weak var delegate: (any LoopStreamDelegate)? {
        willSet { checkThread("LoopStream.delegate") }
    }

    let socket: LoopStreamSocket
    var status: Stream.Status = .notOpen
    var error: StreamConnectionError?
    /// The modes the stream is scheduled in, in its loop, in the order they were added.
    private(set) var scheduledModes: [RunLoop.Mode] = []
    /// The connection was made while the stream was open (so `.openCompleted` is owed).
    var connectionMade = false
    var openCompletedDelivered = false
    var errorDelivered = false
    /// Moves when the stream is scheduled, removed or closed: a delivery queued before that does
    /// nothing.
    private var deliveryGeneration = 0
    private var deliveryQueued = false

    init(socket: LoopStreamSocket) {
        self.socket = socket
    }

    /// Where the stream is: `.notOpen`, `.opening` (connecting), `.open`, `.atEnd` (input: the
    /// peer's end was read), `.closed` (by ``close()``) or `.error` (``streamError``). Never
    /// `.reading` or `.writing`: reads and writes do not block.
    ///
    /// Thread-safety: the stream's loop thread.
    public var streamStatus: Stream.Status {
        checkThread("LoopStream.streamStatus")
        return status
    }

    /// Why the stream failed (status `.error`): the connect's error (a refused connection, a name
    /// that does not resolve, a deadline passed) or the connection's (a reset). nil otherwise.
    ///
    /// Thread-safety: the stream's loop thread.
    public var streamError: StreamConnectionError? {
        checkThread("LoopStream.streamError")
        return error
    }

    /// The local address of the pair's connection while it is open (nil before, and once it
    /// closed or both its directions ended).
    ///
    /// Thread-safety: the stream's loop thread.
    public var localEndpoint: SocketEndpoint? {
        checkThread("LoopStream.localEndpoint")
        return socket.connection?.localEndpoint
    }

    /// The peer's address while the pair's connection is open (nil before, and once it closed or
    /// both its directions ended).
    ///
    /// Thread-safety: the stream's loop thread.
    public var remoteEndpoint: SocketEndpoint? {
        checkThread("LoopStream.remoteEndpoint")
        return socket.connection?.remoteEndpoint
    }

    /// Opens the stream, asynchronously: the status becomes `.opening` now, and `.open` once the
    /// pair's connection is made (the first stream of the pair to open starts it), when a
    /// scheduled stream's delegate gets `.openCompleted`; or `.error` and `.errorOccurred`. Only a
    /// stream that is `.notOpen` opens; otherwise nothing happens. An unscheduled stream binds to
    /// the calling thread's loop.
    ///
    /// Thread-safety: the stream's loop thread (any thread for a stream without a loop yet).
    public func open() {
        checkThread("LoopStream.open()")
        guard status == .notOpen else { return }
        if socket.loop == nil { socket.bind(to: PortRunLoop.current, "LoopStream.open()") }
        status = .opening
        socket.streamOpened(self)
    }

    /// Closes the stream: no more events reach its delegate, reads and writes return -1.
    /// Closing the input stops reading; closing the output sends what is queued, then shuts the
    /// socket's output down (the peer reads end of stream); once both streams of a pair are
    /// closed (or let go of), the connection closes. A closed stream does not open again.
    /// Idempotent.
    ///
    /// Thread-safety: the stream's loop thread.
    public func close() {
        checkThread("LoopStream.close()")
        guard status != .closed else { return }
        status = .closed
        deliveryGeneration += 1
        deliveryQueued = false
        didClose()
    }

    /// Schedules the stream in `mode` of `loop`: its events reach the delegate during runs of
    /// that mode (`.common`: of the loop's common modes). Both streams of a pair use one loop,
    /// for their whole life; a second loop is a precondition failure.
    ///
    /// Thread-safety: `loop`'s thread.
    public func schedule(in loop: PortRunLoop, forMode mode: RunLoop.Mode) {
        loop.preconditionOnLoopThread("LoopStream.schedule(in:forMode:)")
        socket.bind(to: loop, "LoopStream.schedule(in:forMode:)")
        guard !scheduledModes.contains(mode) else { return }
        scheduledModes.append(mode)
        rescheduled()
    }

    /// Removes the stream from `mode` of `loop`: from now on its events are not delivered in runs
    /// of that mode (a delivery already queued for it does nothing). Events found while the
    /// stream is scheduled in no mode are delivered once it is scheduled again. Removing it from
    /// a mode or loop it is not scheduled in does nothing.
    ///
    /// Thread-safety: `loop`'s thread.
    public func remove(from loop: PortRunLoop, forMode mode: RunLoop.Mode) {
        loop.preconditionOnLoopThread("LoopStream.remove(from:forMode:)")
        guard socket.loop === loop, let index = scheduledModes.firstIndex(of: mode) else { return }
        scheduledModes.remove(at: index)
        rescheduled()
    }

    func checkThread(_ what: @autoclosure () -> String) {
        socket.loop?.preconditionOnLoopThread(what())
    }

    // MARK: What the socket tells the stream (on the loop's thread)

    /// The pair's connection is made.
    func socketOpened() {
        guard status == .opening else { return }
        status = .open
        connectionMade = true
        statusMayHaveChanged()
        requestDelivery()
    }

    /// The connection could not be made, or failed.
    func socketFailed(_ failure: StreamConnectionError) {
        guard status == .opening || status == .open, acceptsFailure else { return }
        status = .error
        error = failure
        requestDelivery()
    }

    /// The connection closed without an error while the stream was open (a connection made
    /// elsewhere, closed by its other user): the stream is at its end.
    func socketClosed() {}

    // MARK: Overridden by the two directions

    /// Whether a connection failure now makes the stream fail (an input whose end was already
    /// read does not).
    var acceptsFailure: Bool { true }

    /// Re-judges the status after a change (the input reaches `.atEnd`).
    func statusMayHaveChanged() {}

    /// The stream's own part of closing.
    func didClose() {}

    /// The next event owed to the delegate, in Apple's order: `.openCompleted`, then
    /// `.errorOccurred`; the directions add theirs after.
    func nextEvent() -> Stream.Event? {
        guard status != .closed, status != .notOpen else { return nil }
        if connectionMade, !openCompletedDelivered { return .openCompleted }
        if status == .error, !errorDelivered { return .errorOccurred }
        return nil
    }

    /// Notes that `event` is being delivered.
    func delivering(_ event: Stream.Event) {
        if event == .openCompleted { openCompletedDelivered = true }
        if event == .errorOccurred { errorDelivered = true }
    }

    // MARK: Delivery

    /// Queues a delivery of what is owed, for the modes the stream is scheduled in, unless one is
    /// queued, nothing is owed, or the stream is scheduled nowhere.
    func requestDelivery() {
        guard !deliveryQueued, !scheduledModes.isEmpty, let loop = socket.loop, nextEvent() != nil else { return }
        deliveryQueued = true
        let generation = deliveryGeneration
        let box = LoopConfined(WeakStream(self))
        if !loop.perform(inModes: scheduledModes, { box.value.stream?.deliver(generation: generation) }) {
            deliveryQueued = false // the loop shut down: nothing will run here again
        }
    }

    /// Tells the delegate what is owed, each kind of event at most once per turn (a delegate
    /// that reads only part of what is buffered is told again on a later turn, not in a loop).
    private func deliver(generation: Int) {
        guard generation == deliveryGeneration else { return }
        deliveryQueued = false
        var told: Stream.Event = []
        while generation == deliveryGeneration, let event = nextEvent(), !told.contains(event) {
            told.insert(event)
            delivering(event)
            delegate?.stream(self, handle: event)
        }
        requestDelivery()
    }

    /// The schedule changed: deliveries queued for the old modes do nothing; what is owed is
    /// queued for the new ones.
    private func rescheduled() {
        deliveryGeneration += 1
        deliveryQueued = false
        requestDelivery()
    }
}

/// A weak reference to a stream, carried by its queued deliveries (a stream let go of is not kept
/// alive for them).
struct WeakStream {
    weak var stream: LoopStream?
    init(_ stream: LoopStream) { self.stream = stream }
}
