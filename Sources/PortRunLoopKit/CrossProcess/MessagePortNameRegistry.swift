import Foundation
import Logging

/// Publishes ``MessagePort``s under names for other processes of this host, and looks names up
/// (the counterpart of `NSMessagePortNameServer`, and of `CFMessagePortCreateLocal(name)` /
/// `CFMessagePortCreateRemote(name)`).
///
/// Names live in a directory of this user's: `$XDG_RUNTIME_DIR/portrunloop/`, else
/// `/tmp/portrunloop-<uid>/` (made with mode 0700; refused unless it is a real directory owned by
/// this user with no group or other permission). A published name is a `SOCK_SEQPACKET` socket
/// `<name>.sock` (0600) and a lock file `<name>.lock` the publisher holds (`flock`) for its
/// lifetime: a live publisher's name is refused to others, a dead one's is reclaimed. See the
/// CrossProcessPorts article for the wire format, credits and security model.
///
/// Thread-safety: `Sendable`; immutable.
public struct MessagePortNameRegistry: Sendable {
    /// The directory the names live in. Thread-safety: immutable.
    public let directory: String
    private let logger: Logger?

    /// A registry in the default directory (see the type's description).
    ///
    /// Thread-safety: any thread.
    public static var `default`: MessagePortNameRegistry { MessagePortNameRegistry() }

    /// Makes a registry.
    ///
    /// - Parameters:
    ///   - directory: where the names live; nil: the default (see the type's description). It is
    ///     made (0700) when first needed, and checked at each publish and lookup.
    ///   - logger: where publications and remote ports log (refused peers, protocol violations,
    ///     disconnects at `.debug`); nil: the publishing loop's logger, or nothing for remote ports.
    ///
    /// Thread-safety: any thread.
    public init(directory: String? = nil, logger: Logger? = nil) {
        self.directory = directory ?? PortNameDirectory.defaultPath()
        self.logger = logger
    }

    private var names: PortNameDirectory { PortNameDirectory(path: directory) }

    /// Publishes `port` under `name`: other processes may look it up and send to it. The listener
    /// and the connections are fd sources of `loop` in `modes` (pass the loop the port is scheduled
    /// in: messages are read on its thread and queued in the port like local sends).
    ///
    /// A name whose lock file is held by a live process is refused; one left by a process that died
    /// (lock free) is reclaimed. Each connection starts with the port's current queue limit as its
    /// credits.
    ///
    /// - Parameters:
    ///   - port: the port to publish (a local one; it stays usable locally).
    ///   - name: the name: 1 or more of `[A-Za-z0-9._-]`, not starting with a dot.
    ///   - loop: the loop whose thread reads the connections (the port's loop).
    ///   - modes: the modes the listener and connections are watched in.
    ///   - options: the largest frame accepted, and the user ids allowed to connect.
    /// - Returns: the publication; the name stays published until it is unpublished or the port
    ///   is invalidated.
    /// - Throws: ``CrossProcessPortError/invalidName(_:reason:)``,
    ///   ``CrossProcessPortError/unsafeDirectory(_:reason:)``, ``CrossProcessPortError/nameInUse(_:)``,
    ///   ``CrossProcessPortError/invalidPort`` (the port is invalid, or the loop shut down),
    ///   ``CrossProcessPortError/loopRefusedSocket(_:)``, ``CrossProcessPortError/systemCallFailed(_:errno:)``.
    ///
    /// Thread-safety: any thread.
    public func publish(_ port: MessagePort, as name: String, on loop: PortRunLoop, inModes modes: [RunLoop.Mode] = [.common],
                        options: CrossProcessPortOptions = CrossProcessPortOptions()) throws(CrossProcessPortError) -> PublishedMessagePort {
        Misuse.check(port.remote == nil, "MessagePortNameRegistry.publish: a remote port cannot be published")
        Misuse.check(!modes.isEmpty, "MessagePortNameRegistry.publish: the mode list is empty")
        let names = self.names
        try names.validate(name)
        guard port.isValid else { throw .invalidPort }
        try names.prepare()
        let lockPath = names.lockPath(for: name)
        let socketPath = names.socketPath(for: name)
        let lockFD: Int32
        switch System.openLockFile(lockPath) {
        case .success(let fd): lockFD = fd
        case .failure(let error): throw .systemCallFailed("open(\(lockPath))", errno: error.code)
        }
        switch System.tryLockExclusive(lockFD) {
        case .success(true): break
        case .success(false):
            System.closeDescriptor(lockFD)
            throw .nameInUse(name)
        case .failure(let error):
            System.closeDescriptor(lockFD)
            throw .systemCallFailed("flock(\(lockPath))", errno: error.code)
        }
        let logger = self.logger ?? loop.currentLogger
        // We hold the lock, so any socket file there is stale: its publisher died.
        if case .success(.some) = System.pathInfo(socketPath) {
            if let error = System.unlink(socketPath) {
                System.closeDescriptor(lockFD)
                throw .systemCallFailed("unlink(\(socketPath))", errno: error.code)
            }
            logger.notice("MessagePort name reclaimed from a process that is gone", metadata: [LogKey.portName: "\(name)"])
        }
        let listenerFD: Int32
        switch System.makeSeqpacketSocket() {
        case .success(let fd): listenerFD = fd
        case .failure(let error):
            System.closeDescriptor(lockFD)
            throw .systemCallFailed("socket", errno: error.code)
        }
        func fail(_ call: String, _ error: System.Errno) -> CrossProcessPortError {
            System.closeDescriptor(listenerFD)
            _ = System.unlink(socketPath)
            System.closeDescriptor(lockFD) // the lock file stays (see PublishedMessagePort.unpublish)
            return .systemCallFailed(call, errno: error.code)
        }
        // Recorded before the socket exists: a client that connected reads this publisher's values.
        let parameters = PublisherParameters(credits: port.queueLimit, maximumFrameSize: options.maximumMessageSize)
        if let error = System.replaceContents(of: lockFD, with: parameters.encoded) { throw fail("write(\(lockPath))", error) }
        if let error = System.bindAndListen(listenerFD, path: socketPath, backlog: 128) { throw fail("bind/listen(\(socketPath))", error) }
        if let error = System.changeMode(socketPath, 0o600) { throw fail("chmod(\(socketPath))", error) }
        let published = PublishedMessagePort(
            port: port, name: name, socketPath: socketPath, listenerFD: listenerFD, lockFD: lockFD,
            loop: loop, modes: modes, options: options, parameters: parameters, logger: logger)
        do {
            try published.startListening()
        } catch {
            published.unpublish()
            throw CrossProcessPortError(error)
        }
        port.onInvalidation { [weak published] in published?.unpublish() }
        logger.debug("MessagePort published", metadata: [LogKey.portName: "\(name)", LogKey.port: "\(port)"])
        return published
    }

    /// Looks `name` up and returns a remote port: a ``MessagePort`` whose sends go to the port
    /// published under that name (`CFMessagePortCreateRemote`). Send to it with
    /// ``MessagePort/send(before:msgid:components:from:)`` (each message spends a credit; with none
    /// left the send waits until its date) or ``MessagePort/sendRequest(msgid:components:sendTimeout:receiveTimeout:)-834zi``.
    /// It becomes invalid by itself when the publisher goes away (its ``MessagePort/isValid`` turns
    /// false and its ``MessagePort/setInvalidationHandler(on:_:)`` closure runs, with the reason);
    /// ``MessagePort/invalidate()`` closes the connection. A remote port cannot be scheduled in a loop.
    ///
    /// - Parameters:
    ///   - name: the name the port was published under.
    ///   - options: the maximum size of frames the publisher may send back, and the user ids the
    ///     publisher may run as (`SO_PEERCRED`; default: this process's).
    ///   - loop: a loop that reads what the publisher sends back (credits, replies, messages to reply
    ///     ports) as it arrives; nil: it is read only while a send, request or `isValid` looks.
    ///     Messages to reply ports passed in `from:` need a loop here to arrive without a send.
    /// - Throws: ``CrossProcessPortError/invalidName(_:reason:)``, ``CrossProcessPortError/unsafeDirectory(_:reason:)``,
    ///   ``CrossProcessPortError/notPublished(_:)``, ``CrossProcessPortError/peerNotAllowed(uid:)``,
    ///   ``CrossProcessPortError/systemCallFailed(_:errno:)``; with `loop`, also
    ///   ``CrossProcessPortError/invalidPort`` (the loop shut down) and
    ///   ``CrossProcessPortError/loopRefusedSocket(_:)``.
    ///
    /// Thread-safety: any thread.
    public func remotePort(named name: String, options: CrossProcessPortOptions = CrossProcessPortOptions(),
                           readingOn loop: PortRunLoop? = nil) throws(CrossProcessPortError) -> MessagePort {
        let names = self.names
        try names.validate(name)
        try names.verify()
        let fd: Int32
        switch System.makeSeqpacketSocket() {
        case .success(let socket): fd = socket
        case .failure(let error): throw .systemCallFailed("socket", errno: error.code)
        }
        if let error = System.connect(fd, path: names.socketPath(for: name)) {
            System.closeDescriptor(fd)
            switch error.code {
            case ENOENT, ECONNREFUSED: throw .notPublished(name)
            default: throw .systemCallFailed("connect", errno: error.code)
            }
        }
        let parameters: PublisherParameters
        do { parameters = try readParameters(of: name, in: names) } catch {
            System.closeDescriptor(fd)
            throw error
        }
        guard let credentials = System.peerCredentials(fd) else {
            let code = System.lastError
            System.closeDescriptor(fd)
            throw .systemCallFailed("getsockopt(SO_PEERCRED)", errno: code)
        }
        guard options.allows(credentials.uid) else {
            System.closeDescriptor(fd)
            throw .peerNotAllowed(uid: credentials.uid)
        }
        let wakeFD: Int32
        do throws(PortRunLoopError) { wakeFD = try System.makeEventfd() } catch {
            let code = System.lastError
            System.closeDescriptor(fd)
            throw .systemCallFailed("eventfd", errno: code)
        }
        let logger = self.logger ?? loop?.currentLogger ?? .portRunLoopDisabled
        let connection = RemoteConnection(fd: fd, wakeFD: wakeFD, name: name, options: options, parameters: parameters, logger: logger)
        let port = MessagePort(remote: connection, logger: logger)
        // The connection's end invalidates the port, with its reason (its invalidation handler).
        connection.setEndObserver { [weak port] reason in port?.invalidate(reason: reason) }
        if let loop {
            do { try connection.startReading(on: loop) } catch {
                port.invalidate()
                throw CrossProcessPortError(error)
            }
        }
        return port
    }

    /// Reads the publisher's parameters from the name's lock file. Called once connected: a
    /// publisher records them before it binds its socket, so the file read is the one of the
    /// publisher the connection reached. (Probing the lock instead would make a publisher that
    /// takes it at that instant fail with "name in use".)
    private func readParameters(of name: String, in names: PortNameDirectory) throws(CrossProcessPortError) -> PublisherParameters {
        let lockFD: Int32
        switch System.openForReading(names.lockPath(for: name)) {
        case .success(let fd): lockFD = fd
        case .failure(let error):
            if error.code == ENOENT { throw .notPublished(name) }
            throw .systemCallFailed("open(\(names.lockPath(for: name)))", errno: error.code)
        }
        defer { System.closeDescriptor(lockFD) }
        let bytes: [UInt8]
        switch System.readContents(of: lockFD, limit: 128) {
        case .success(let read): bytes = read
        case .failure(let error): throw .systemCallFailed("pread(\(names.lockPath(for: name)))", errno: error.code)
        }
        guard let parameters = PublisherParameters(bytes) else { throw .notPublished(name) } // not a publisher's record
        return parameters
    }
}
