import Foundation
import Logging

/// A connected stream socket (TCP over IPv4 or IPv6, or a Unix stream socket) owned by one
/// ``PortRunLoop`` and served in its modes: bytes that arrive go to ``onRead``,
/// ``write(_:)-(UnsafeRawBufferPointer)``
/// queues what the kernel cannot take at once and sends it as the socket drains, and each change
/// of state (end of input, writability, close) reaches ``onEvent`` once, as a typed value.
///
/// Make one with ``connect(to:on:timeout:options:inModes:completion:)``, or take one from a
/// ``StreamListener``. An echo server's whole connection code:
///
/// ```swift
/// connection.onRead = { connection, bytes in connection.write(bytes) }
/// ```
///
/// A connection belongs to its loop's thread: every member is used there (a precondition checks
/// it), and its handlers run only there, so they may capture state that is not `Sendable` (a
/// parser, a buffer) with no lock. From another thread, reach it through the loop
/// (``PortRunLoop/perform(_:)``) or use ``AsyncStreamConnection``.
///
/// Interest follows what the connection needs, without re-registering it: it watches for input
/// unless reading is paused (``pauseReading()``) or input ended, and for room to write only while
/// something is queued. The descriptor is closed when the connection closes.
///
/// Thread-safety: not `Sendable`; bound to ``loop``'s thread (checked).
public final class StreamConnection {
    /// The loop that owns the connection and runs its handlers.
    ///
    /// Thread-safety: immutable.
    public let loop: PortRunLoop
    /// The connection's socket, until it closes (-1 after).
    ///
    /// Thread-safety: the loop's thread.
    public internal(set) var fileDescriptor: Int32
    /// The options it was made with; the water marks may be changed later.
    ///
    /// Thread-safety: the loop's thread.
    public private(set) var options: Options

    /// Called with each run of bytes read, in order. `bytes` is valid only during the call (it is
    /// the loop's read buffer): copy what you keep. nil: input is read and dropped.
    ///
    /// Thread-safety: set and called on the loop's thread.
    public var onRead: ((StreamConnection, UnsafeRawBufferPointer) -> Void)? {
        willSet { checkThread("StreamConnection.onRead") }
    }
    /// Called once for each ``StreamConnectionEvent``; ``StreamConnectionEvent/closed(_:)`` is the
    /// last, after which both handlers are released (so a handler capturing the connection makes
    /// no lasting cycle).
    ///
    /// Thread-safety: set and called on the loop's thread.
    public var onEvent: ((StreamConnection, StreamConnectionEvent) -> Void)? {
        willSet { checkThread("StreamConnection.onEvent") }
    }

    enum Phase {
        /// The transport's opening (a TLS handshake) is in progress.
        case starting
        case open
        case closed
    }

    var phase: Phase
    var source: FileDescriptorSource?
    /// The byte layer other than the plain socket (TLS), nil for a plain connection.
    package let transport: (any StreamTransport)?
    let modes: [RunLoop.Mode]
    /// ``modes`` as the loop's queue takes them: events reported later run in these modes only.
    let modeSet: ModeSet
    var outbound = ByteQueue()
    /// Readiness interest as last given to the fd source.
    var interest: FileDescriptorSource.Events = []
    /// What the transport's last read or write waited for (plain sockets: read and write).
    var readWaitsFor: FileDescriptorSource.Events = .read
    var writeWaitsFor: FileDescriptorSource.Events = .write
    var isReadingPaused = false
    var inputEnded = false
    var outputShutdownRequested = false
    var outputShutDown = false
    var closesAfterFlush = false
    /// Events found inside a call of the user's, reported before the next turn (``reportLater(_:)``).
    var deferredEvents: [StreamConnectionEvent] = []
    /// Below the high-water mark since it was last below the low one.
    /// Whether the outbound queue is below the high-water mark (since it last drained below the
    /// low one): false while a writer should wait for ``StreamConnectionEvent/writabilityChanged(_:)``.
    ///
    /// Thread-safety: the loop's thread.
    public internal(set) var isWritable = true
    /// Told once the transport's opening completed or failed (a TLS handshake).
    var whenStarted: ((Result<StreamConnection, StreamConnectionError>) -> Void)?
    var startTimer: RunLoopTimer?
    private var cachedLocal: SocketEndpoint??
    private var cachedRemote: SocketEndpoint??

    /// A connection over `fileDescriptor` (connected, non-blocking, close-on-exec), registered at
    /// once. `transport` nil: the plain socket. When it throws, the caller still owns (and closes)
    /// the descriptor. Loop thread only.
    init(fileDescriptor: Int32, loop: PortRunLoop, options: Options, modes: [RunLoop.Mode],
         transport: (any StreamTransport)?) throws(StreamConnectionError) {
        self.loop = loop
        self.fileDescriptor = fileDescriptor
        self.options = options
        self.modes = modes
        self.modeSet = modes.count == 1 && modes[0] == .common ? .common : ModeSet(modes)
        self.transport = transport
        self.phase = transport == nil ? .open : .starting
        options.apply(to: fileDescriptor)
        let box = LoopConfined(self)
        do throws(PortRunLoopError) {
            // Input first: room to write is watched for only once a write had to queue.
            source = try loop.watch(fileDescriptor: fileDescriptor, for: .read, inModes: modes, spinRead: nil,
                                    knownPollable: true,
                                    onFailure: { error in box.value.registrationFailed(error) },
                                    onShutDown: { box.value.finishClose(.loopShutDown, reportNow: true) },
                                    handler: { ready in box.value.handleReady(ready) })
        } catch {
            // The object is released as the init throws, and its deinit must not close the
            // descriptor the caller closes.
            self.fileDescriptor = -1
            throw error == .loopShutDown ? .loopShutDown : .system(call: "epoll_ctl", errno: EBADF)
        }
        interest = .read
    }

    /// The connection's own address (`getsockname`), nil once closed.
    ///
    /// Thread-safety: the loop's thread.
    public var localEndpoint: SocketEndpoint? {
        checkThread("StreamConnection.localEndpoint")
        if let cachedLocal { return cachedLocal }
        let endpoint = fileDescriptor < 0 ? nil : System.socketName(fileDescriptor, peer: false)?.endpoint
        cachedLocal = endpoint
        return endpoint
    }

    /// The peer's address (`getpeername`), nil once closed.
    ///
    /// Thread-safety: the loop's thread.
    public var remoteEndpoint: SocketEndpoint? {
        checkThread("StreamConnection.remoteEndpoint")
        if let cachedRemote { return cachedRemote }
        let endpoint = fileDescriptor < 0 ? nil : System.socketName(fileDescriptor, peer: true)?.endpoint
        cachedRemote = endpoint
        return endpoint
    }

    /// True until the connection closed.
    ///
    /// Thread-safety: the loop's thread.
    public var isOpen: Bool {
        checkThread("StreamConnection.isOpen")
        return phase != .closed
    }

    /// Bytes written and not yet handed to the kernel.
    ///
    /// Thread-safety: the loop's thread.
    public var queuedByteCount: Int {
        checkThread("StreamConnection.queuedByteCount")
        return outbound.count
    }

    /// Stops reading: bytes stay in the kernel (and the peer's writes stall once its buffers fill)
    /// until ``resumeReading()``. The way to pass back-pressure on, from a slow consumer to the
    /// peer.
    ///
    /// Thread-safety: the loop's thread.
    public func pauseReading() {
        checkThread("StreamConnection.pauseReading()")
        isReadingPaused = true
        updateInterest()
    }

    /// Reads again after ``pauseReading()``.
    ///
    /// Thread-safety: the loop's thread.
    public func resumeReading() {
        checkThread("StreamConnection.resumeReading()")
        isReadingPaused = false
        updateInterest()
        readBufferedInputLater()
    }

    /// Changes the water marks (see ``Options/lowWaterMark``); writability is re-judged at the
    /// next write or flush.
    ///
    /// Thread-safety: the loop's thread.
    public func setWaterMarks(low: Int, high: Int) {
        checkThread("StreamConnection.setWaterMarks(low:high:)")
        Misuse.check(low >= 0 && low <= high, "StreamConnection.setWaterMarks(low:high:): need 0 <= low <= high, got \(low), \(high)")
        options.lowWaterMark = low
        options.highWaterMark = high
    }

    func checkThread(_ what: @autoclosure () -> String) {
        loop.preconditionOnLoopThread(what())
    }

    /// Sets the fd source's interest to what the connection needs now: input unless paused or
    /// ended, output while bytes wait (or a shutdown waits to be sent); during the transport's
    /// opening, whatever it waits for.
    func updateInterest() {
        guard phase != .closed, let source else { return }
        var wanted: FileDescriptorSource.Events = []
        switch phase {
        case .starting:
            wanted = readWaitsFor
        case .open:
            if !isReadingPaused && !inputEnded && !closesAfterFlush { wanted.formUnion(readWaitsFor) }
            if !outbound.isEmpty || (outputShutdownRequested && !outputShutDown) { wanted.formUnion(writeWaitsFor) }
        case .closed:
            return
        }
        guard wanted != interest else { return }
        interest = wanted
        loop.setInterest(of: source, to: wanted)
    }

    /// The loop could not keep watching the socket (a re-arm the kernel refused).
    private func registrationFailed(_ error: PortRunLoopError) {
        finishClose(error == .loopShutDown ? .loopShutDown : .system(call: "epoll_ctl", errno: EBADF), reportNow: true)
    }

    deinit {
        if fileDescriptor >= 0 { System.closeDescriptor(fileDescriptor) }
    }
}

/// A value carried through a `@Sendable` closure that the loop runs on its own thread, where the
/// value lives: the closure crosses no thread with it (fd sources' and timers' handlers run on the
/// loop's thread only). Only the library's own thread-bound objects use it, each checking its
/// thread in its public members.
///
/// Thread-safety: `@unchecked Sendable` by that confinement.
struct LoopConfined<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
