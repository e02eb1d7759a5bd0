import Foundation

extension StreamConnection {
    /// Connects to `endpoint` on `loop`, and calls `completion` on the loop's thread, once, with
    /// the open connection or why there is none.
    ///
    /// A host name is resolved off the loop's thread (`getaddrinfo` may wait on a name server); a
    /// numeric host or a Unix path needs no resolution. Each address found is tried in turn
    /// (non-blocking `connect`) until one accepts; the whole attempt, resolution included, ends at
    /// `timeout` with ``StreamConnectionError/timedOut(_:)``.
    ///
    /// - Parameters:
    ///   - endpoint: where to connect.
    ///   - loop: the loop that will own the connection.
    ///   - timeout: seconds for the whole attempt, resolution included.
    ///   - options: the connection's buffering and socket options.
    ///   - modes: the modes the connection is served in (its reads, writes and events), and
    ///     in which the connect and its deadline are watched.
    ///   - completion: runs on the loop's thread; set the connection's handlers there.
    ///
    /// Thread-safety: any thread.
    public static func connect(to endpoint: SocketEndpoint, on loop: PortRunLoop, timeout: TimeInterval = 30,
                               options: Options = Options(), inModes modes: [RunLoop.Mode] = [.common],
                               completion: @escaping @Sendable (Result<StreamConnection, StreamConnectionError>) -> Void) {
        connect(to: endpoint, on: loop, timeout: timeout, options: options, inModes: modes, transport: nil, completion: completion)
    }

    /// ``connect(to:on:timeout:options:inModes:completion:)`` with a transport made for the socket
    /// once it is connected (TLS): `completion` is told after the transport's opening too.
    ///
    /// Thread-safety: any thread.
    package static func connect(to endpoint: SocketEndpoint, on loop: PortRunLoop, timeout: TimeInterval,
                                options: Options, inModes modes: [RunLoop.Mode], transport: StreamTransportMaker?,
                                completion: @escaping @Sendable (Result<StreamConnection, StreamConnectionError>) -> Void) {
        Misuse.check(!modes.isEmpty, "StreamConnection.connect(to:on:): the mode list is empty")
        Misuse.check(!timeout.isNaN, "StreamConnection.connect(to:on:): the timeout is NaN")
        let deadline = Date(timeIntervalSinceNow: max(timeout, 0))
        let attempt = ConnectAttempt(endpoint: endpoint, loop: loop, deadline: deadline, options: options, modes: modes,
                                     transport: transport, completion: completion)
        let numeric: [System.SocketAddress]?
        do throws(StreamConnectionError) {
            numeric = try endpoint.resolveNumeric(passive: false)
        } catch {
            attempt.startOnLoop(.failure(error))
            return
        }
        if let numeric {
            attempt.startOnLoop(.success(numeric))
        } else {
            attempt.armDeadlineOnLoop()
            DispatchQueue.global().async {
                let resolved = Result { () throws(StreamConnectionError) in try endpoint.resolveBlocking(passive: false) }
                attempt.startOnLoop(resolved)
            }
        }
    }
}

/// One ``StreamConnection/connect(to:on:timeout:options:inModes:completion:)`` in progress: the
/// addresses left to try, the socket being connected and its fd source, the deadline's timer.
/// Its state lives on the loop's thread; resolution, on another thread, only hands its result in.
///
/// Thread-safety: `@unchecked Sendable`; its `var`s are touched on `loop`'s thread only (every
/// entry from elsewhere hops there through the loop's queue first).
final class ConnectAttempt: @unchecked Sendable {
    let endpoint: SocketEndpoint
    let loop: PortRunLoop
    let deadline: Date
    let options: StreamConnection.Options
    let modes: [RunLoop.Mode]
    let transport: StreamTransportMaker?
    private var completion: (@Sendable (Result<StreamConnection, StreamConnectionError>) -> Void)?
    private var addresses: [System.SocketAddress] = []
    private var fd: Int32 = -1
    private var source: FileDescriptorSource?
    private var timer: RunLoopTimer?
    private var lastError: StreamConnectionError?
    /// The connection whose transport is opening (a TLS handshake), until it completes.
    private var pendingConnection: StreamConnection?

    init(endpoint: SocketEndpoint, loop: PortRunLoop, deadline: Date, options: StreamConnection.Options,
         modes: [RunLoop.Mode], transport: StreamTransportMaker?,
         completion: @escaping @Sendable (Result<StreamConnection, StreamConnectionError>) -> Void) {
        self.endpoint = endpoint
        self.loop = loop
        self.deadline = deadline
        self.options = options
        self.modes = modes
        self.transport = transport
        self.completion = completion
    }

    /// Starts the deadline's timer on the loop (before a resolution that may take long).
    func armDeadlineOnLoop() {
        if !loop.onOwner({ _ in self.armDeadline() }) { finish(.failure(.loopShutDown)) }
    }

    /// Goes on on the loop's thread with the addresses (or the failure) resolution produced.
    func startOnLoop(_ resolved: Result<[System.SocketAddress], StreamConnectionError>) {
        let queued = loop.onOwner { _ in
            switch resolved {
            case .success(let addresses):
                self.addresses = addresses
                self.armDeadline()
                self.tryNextAddress()
            case .failure(let error):
                self.finish(.failure(error))
            }
        }
        // The loop is gone: told here, on whatever thread this is (there is no loop thread).
        if !queued { finish(.failure(.loopShutDown)) }
    }

    private func armDeadline() {
        guard timer == nil, completion != nil else { return }
        let timer = RunLoopTimer(fireAt: deadline) { [self] _ in
            self.finish(.failure(.timedOut(self.endpoint)))
        }
        self.timer = timer
        for mode in modes { loop.add(timer, forMode: mode) }
    }

    /// Starts a non-blocking connect to the next address; after the last, fails with the last
    /// address's error.
    private func tryNextAddress() {
        while completion != nil {
            guard !addresses.isEmpty else {
                finish(.failure(lastError ?? .connectionRefused(endpoint)))
                return
            }
            let address = addresses.removeFirst()
            guard case .success(let socket) = System.makeStreamSocket(family: address.family) else {
                lastError = .system(call: "socket", errno: System.lastError)
                continue
            }
            fd = socket
            switch System.startConnect(socket, to: address) {
            case .connected:
                connected()
                return
            case .inProgress:
                do throws(PortRunLoopError) {
                    source = try loop.watch(fileDescriptor: socket, for: .write, inModes: modes, spinRead: nil, knownPollable: true,
                                            onFailure: { [self] _ in self.attemptFailed(.system(call: "epoll_ctl", errno: EBADF)) },
                                            handler: { [self] _ in self.writable() })
                } catch {
                    attemptFailed(error == .loopShutDown ? .loopShutDown : .system(call: "epoll_ctl", errno: EBADF))
                }
                return
            case .failed(let error):
                attemptFailed(Self.classify(error.code, endpoint: endpoint))
            }
        }
    }

    /// The connect in progress completed: connected, or refused (then the next address).
    private func writable() {
        guard completion != nil, fd >= 0 else { return }
        source?.cancel()
        source = nil
        let error = System.pendingSocketError(fd)
        if error == 0 { connected() } else { attemptFailed(Self.classify(error, endpoint: endpoint)) }
    }

    private func attemptFailed(_ error: StreamConnectionError) {
        source?.cancel()
        source = nil
        if fd >= 0 { System.closeDescriptor(fd); fd = -1 }
        lastError = error
        if error == .loopShutDown { finish(.failure(error)); return }
        tryNextAddress()
    }

    private func connected() {
        let socket = fd
        fd = -1
        let made: StreamTransport?
        do throws(StreamConnectionError) {
            made = try transport?(socket, Self.hostName(of: endpoint))
        } catch {
            System.closeDescriptor(socket)
            finish(.failure(error))
            return
        }
        let connection: StreamConnection
        do throws(StreamConnectionError) {
            connection = try StreamConnection(fileDescriptor: socket, loop: loop, options: options, modes: modes, transport: made)
        } catch {
            made?.close()
            System.closeDescriptor(socket)
            finish(.failure(error))
            return
        }
        guard connection.phase == .starting else { finish(.success(connection)); return }
        // The transport's opening (a TLS handshake) runs under the same deadline.
        pendingConnection = connection
        connection.whenStarted = { [self] result in
            self.pendingConnection = nil
            self.finish(result)
        }
        connection.advanceStart()
    }

    /// Tells the completion once; frees the timer, and the socket of an attempt left unfinished.
    private func finish(_ result: Result<StreamConnection, StreamConnectionError>) {
        guard let completion else {
            if case .success(let connection) = result { connection.close() }
            return
        }
        self.completion = nil
        timer?.invalidate()
        timer = nil
        source?.cancel()
        source = nil
        if fd >= 0 { System.closeDescriptor(fd); fd = -1 }
        if let pending = pendingConnection, case .failure(let error) = result {
            // A connection still in its opening when the deadline passed.
            pendingConnection = nil
            pending.failStart(error)
        }
        completion(result)
    }

    /// The host name a TLS transport verifies (nil for a Unix socket).
    static func hostName(of endpoint: SocketEndpoint) -> String? {
        if case .host(let host, _) = endpoint { host } else { nil }
    }

    /// The error of a failed connect's errno.
    static func classify(_ code: Int32, endpoint: SocketEndpoint) -> StreamConnectionError {
        switch code {
        case ECONNREFUSED, ENOENT: .connectionRefused(endpoint)
        case ETIMEDOUT: .timedOut(endpoint)
        default: .system(call: "connect", errno: code)
        }
    }
}
