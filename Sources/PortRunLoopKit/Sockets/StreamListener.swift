import Foundation
import Synchronization

/// A listening stream socket (TCP over IPv4 or IPv6, or a Unix stream socket) served by a
/// ``PortRunLoop``: each connection it accepts becomes a ``StreamConnection`` handed to
/// `onConnection` on the thread of the loop that will serve it.
///
/// ```swift
/// let listener = try StreamListener(on: .host("127.0.0.1", port: 7777), loop: thread.loop) { connection in
///     connection.onRead = { connection, bytes in connection.write(bytes) }
/// }
/// ```
///
/// With `distributingTo`, accepted connections go round-robin to those loops (the listener's
/// own loop only accepts), each served, with its handlers, on its own loop's thread: what a
/// server spreads over a ``RunLoopThreadGroup``.
///
/// **Out of descriptors.** When `accept` fails with `EMFILE`, `ENFILE`, `ENOBUFS` or `ENOMEM`,
/// the listener stops watching its socket (a level-triggered listener would otherwise be reported
/// ready, and fail, on every turn: a spinning thread) and looks again after a pause that doubles
/// from 10 ms to 1 s while the shortage lasts; the waiting connections stay in the kernel's
/// backlog meanwhile, and are accepted once descriptors free. Each pause is counted
/// (``Statistics/exhaustionPauses``) and the first of a shortage is logged at `.warning`.
///
/// Thread-safety: `Sendable`; every member is safe from any thread. `onConnection` runs on the
/// serving loop's thread.
public final class StreamListener: @unchecked Sendable {
    /// How a listener binds and what its connections are made with.
    ///
    /// Thread-safety: a value type; `Sendable`.
    public struct Options: Sendable, Hashable {
        /// `listen`'s backlog: connections the kernel completes and queues before they are
        /// accepted (capped by `net.core.somaxconn`).
        ///
        /// Thread-safety: a value type.
        public var backlog: Int32 = 1024
        /// `SO_REUSEADDR` (TCP): bind a port that still has connections in `TIME_WAIT`.
        ///
        /// Thread-safety: a value type.
        public var reuseAddress = true
        /// `SO_REUSEPORT` (TCP): several sockets, one per loop or per process, listen on one port,
        /// and the kernel spreads new connections over them.
        ///
        /// Thread-safety: a value type.
        public var reusePort = false
        /// Remove a socket file left at a Unix endpoint's path (by a process that ended without
        /// closing its listener) before binding. Only a socket is removed, never another kind of
        /// file.
        ///
        /// Thread-safety: a value type.
        public var removesStaleSocketFile = true
        /// What accepted connections are made with.
        ///
        /// Thread-safety: a value type.
        public var connection = StreamConnection.Options()

        /// The defaults: a backlog of 1024, `SO_REUSEADDR`, stale socket files removed.
        ///
        /// Thread-safety: a pure function.
        public init() {}
    }

    /// Counts of what the listener did.
    ///
    /// Thread-safety: a value type; `Sendable`.
    public struct Statistics: Sendable, Hashable {
        /// Connections accepted and handed on.
        ///
        /// Thread-safety: a value type.
        public var accepted: Int
        /// Accepted connections dropped because their loop was shut down or refused them, or their
        /// transport's opening (a TLS handshake) failed.
        ///
        /// Thread-safety: a value type.
        public var dropped: Int
        /// Times accepting paused because descriptors or kernel memory ran out.
        ///
        /// Thread-safety: a value type.
        public var exhaustionPauses: Int
    }

    /// The loop that accepts.
    ///
    /// Thread-safety: immutable.
    public let loop: PortRunLoop
    /// Where the listener listens, numeric, with the port the kernel chose for port 0.
    ///
    /// Thread-safety: immutable.
    public let localEndpoint: SocketEndpoint

    let fileDescriptor: Int32
    let options: Options
    let modes: [RunLoop.Mode]
    let servingLoops: [PortRunLoop]
    let onConnection: @Sendable (StreamConnection) -> Void
    let transport: StreamTransportMaker?
    let unixPath: String?
    let accepted = Atomic<Int>(0)
    let dropped = Atomic<Int>(0)
    let exhaustionPauses = Atomic<Int>(0)
    /// The fd source, the retry timer and the round-robin position (set on the loop's thread,
    /// taken by ``close()`` from any thread).
    let acceptState: TracedMutex<AcceptState>
    private let closed = Atomic<Bool>(false)
    /// Told once when the listener closes (``IncomingStreamConnections`` ends with it).
    private let closeObserver = TracedMutex<(@Sendable () -> Void)?>(nil)

    struct AcceptState {
        var source: FileDescriptorSource?
        var retryTimer: RunLoopTimer?
        var retryDelay = StreamListener.firstRetryDelay
        var nextLoop = 0
    }

    /// Listens on `endpoint` and accepts on `loop`.
    ///
    /// - Parameters:
    ///   - endpoint: a numeric host is bound at once; a host name is resolved here, on the calling
    ///     thread (`getaddrinfo`), and the first address it gives is bound.
    ///   - loop: the loop that accepts.
    ///   - options: the backlog, socket options, and the accepted connections' options.
    ///   - modes: the modes the listener accepts in, and its connections are served in.
    ///   - servingLoops: loops that serve the accepted connections in turn; empty (the default):
    ///     `loop` serves them.
    ///   - onConnection: runs on the serving loop's thread with each new connection; set its
    ///     handlers there.
    /// - Throws: ``StreamConnectionError/addressInUse(_:)``, ``StreamConnectionError/invalidEndpoint(_:reason:)``,
    ///   ``StreamConnectionError/nameResolutionFailed(_:reason:)``, ``StreamConnectionError/loopShutDown``,
    ///   or the failed system call.
    ///
    /// Thread-safety: any thread.
    public convenience init(on endpoint: SocketEndpoint, loop: PortRunLoop, options: Options = Options(),
                            inModes modes: [RunLoop.Mode] = [.common], distributingTo servingLoops: [PortRunLoop] = [],
                            onConnection: @escaping @Sendable (StreamConnection) -> Void) throws(StreamConnectionError) {
        try self.init(on: endpoint, loop: loop, options: options, inModes: modes, distributingTo: servingLoops,
                      transport: nil, onConnection: onConnection)
    }

    /// The listener, with a transport made for each accepted connection (TLS): `onConnection` is
    /// called once its opening completed.
    ///
    /// Thread-safety: any thread.
    package init(on endpoint: SocketEndpoint, loop: PortRunLoop, options: Options, inModes modes: [RunLoop.Mode],
                 distributingTo servingLoops: [PortRunLoop], transport: StreamTransportMaker?,
                 onConnection: @escaping @Sendable (StreamConnection) -> Void) throws(StreamConnectionError) {
        Misuse.check(!modes.isEmpty, "StreamListener: the mode list is empty")
        Misuse.check(options.backlog >= 0, "StreamListener: the backlog is negative")
        guard let address = try endpoint.resolveBlocking(passive: true).first else {
            throw .invalidEndpoint(endpoint, reason: "no address to listen on")
        }
        var unixPath: String?
        if case .unix(let path) = endpoint {
            unixPath = path
            if options.removesStaleSocketFile { Self.removeStaleSocket(at: path) }
        }
        let fd: Int32
        switch System.makeStreamSocket(family: address.family) {
        case .success(let made): fd = made
        case .failure(let error): throw .system(call: "socket", errno: error.code)
        }
        if !address.isUnix {
            if options.reuseAddress { System.setSocketOption(fd, .reuseAddress, 1) }
            if options.reusePort, let error = System.setSocketOption(fd, .reusePort, 1) {
                System.closeDescriptor(fd)
                throw .system(call: "setsockopt(SO_REUSEPORT)", errno: error.code)
            }
            // "::" listens on IPv4 too (mapped addresses), whatever the system default says.
            if address.family == AF_INET6 { System.setSocketOption(fd, .ipv6Only, 0) }
        }
        if let error = System.bindAndListen(fd, address: address, backlog: options.backlog) {
            System.closeDescriptor(fd)
            throw error.code == EADDRINUSE ? .addressInUse(endpoint) : .system(call: "bind/listen", errno: error.code)
        }
        self.loop = loop
        self.fileDescriptor = fd
        self.localEndpoint = System.socketName(fd, peer: false)?.endpoint ?? endpoint
        self.options = options
        self.modes = modes
        self.servingLoops = servingLoops
        self.onConnection = onConnection
        self.transport = transport
        self.unixPath = unixPath
        self.acceptState = TracedMutex(AcceptState())
        do throws(PortRunLoopError) {
            let source = try loop.watch(fileDescriptor: fd, for: .read, inModes: modes, spinRead: nil, knownPollable: true,
                                        onFailure: { [self] _ in self.close() },
                                        onShutDown: { [self] in self.close() },
                                        handler: { [self] _ in self.acceptReady() })
            acceptState.withLock { $0.source = source }
        } catch {
            System.closeDescriptor(fd)
            if let unixPath { _ = System.unlink(unixPath) }
            throw error == .loopShutDown ? .loopShutDown : .system(call: "epoll_ctl", errno: EBADF)
        }
    }

    /// What the listener has done so far.
    ///
    /// Thread-safety: any thread.
    public var statistics: Statistics {
        Statistics(accepted: accepted.load(ordering: .relaxed), dropped: dropped.load(ordering: .relaxed),
                   exhaustionPauses: exhaustionPauses.load(ordering: .relaxed))
    }

    /// Stops accepting and closes the listening socket (removing a Unix socket's file). Accepted
    /// connections are not affected. Idempotent.
    ///
    /// Thread-safety: any thread.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let (source, timer) = acceptState.withLock { state in
            defer { state.source = nil; state.retryTimer = nil }
            return (state.source, state.retryTimer)
        }
        source?.cancel()
        timer?.invalidate()
        closeObserver.withLock { observer in
            defer { observer = nil }
            return observer
        }?()
        // Closed on the loop's thread, after the loop let go of it (see FileDescriptorSource.cancel).
        let fd = fileDescriptor
        let path = unixPath
        let release: @Sendable (PortRunLoop) -> Void = { _ in
            System.closeDescriptor(fd)
            if let path { _ = System.unlink(path) }
        }
        if !loop.onOwner(release) { release(loop) }
    }

    /// Runs `observer` once when the listener closes (at once if it is closed). One observer.
    func observeClose(_ observer: @escaping @Sendable () -> Void) {
        let now = closeObserver.withLock { stored -> Bool in
            if isClosed { return true }
            Misuse.check(stored == nil, "StreamListener: a second close observer")
            stored = observer
            return false
        }
        if now { observer() }
    }

    /// True once ``close()`` was called (or the loop shut down).
    ///
    /// Thread-safety: any thread.
    public var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// Removes a socket file at `path` that nothing listens on any more: one a connect is refused
    /// by. A socket something listens on stays (the bind then fails with `EADDRINUSE`).
    private static func removeStaleSocket(at path: String) {
        guard case .success(let info?) = System.pathInfo(path), info.isSocket,
              let address = System.unixAddress(path),
              case .success(let probe) = System.makeStreamSocket(family: AF_UNIX) else { return }
        defer { System.closeDescriptor(probe) }
        if case .failed(let error) = System.startConnect(probe, to: address), error.code == ECONNREFUSED {
            _ = System.unlink(path)
        }
    }
}
