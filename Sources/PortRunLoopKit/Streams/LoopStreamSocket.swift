import Foundation

/// The socket under a stream pair: one ``StreamConnection``, made when the first of the pair's
/// streams opens, read by the input stream and written by the output stream. A bound pair
/// (``LoopStream/getBoundStreams(withBufferSize:inputStream:outputStream:)``) has one per stream,
/// over the two ends of a `socketpair`, each with the one stream it serves.
///
/// It lives on its loop's thread once it has a loop (the streams check every call). It holds its
/// streams weakly and the connection's handlers hold it weakly: a pair its owner lets go of
/// closes its connection.
///
/// Thread-safety: not `Sendable`; its loop's thread (the streams check).
final class LoopStreamSocket {
    /// What opening makes the connection from.
    enum Origin {
        /// Connect to an endpoint.
        case endpoint(SocketEndpoint, timeout: TimeInterval)
        /// One end of a `socketpair`, owned here until the connection takes it (-1 after).
        case descriptor(Int32)
        /// Nothing can be opened: this error is what opening reports.
        case unusable(StreamConnectionError)
        /// A connection made elsewhere, served from the start (``adopt(_:)``).
        case adopted
    }

    enum State {
        case idle
        case connecting
        case connected(StreamConnection)
        case failed(StreamConnectionError)
        /// The connection closed without an error (both directions ended, or both streams closed).
        case closed
    }

    private(set) var origin: Origin
    let options: StreamConnection.Options
    /// Bytes the input stream buffers before the connection stops reading (until a read).
    let inputLimit: Int
    /// The loop of the pair, from its first ``LoopStream/schedule(in:forMode:)`` or ``LoopStream/open()``.
    private(set) var loop: PortRunLoop?
    private(set) var state: State = .idle
    /// The modes the connection is served in (set when it starts).
    private(set) var modes: [RunLoop.Mode] = []
    /// True while ``start()`` runs (inside a stream's ``LoopStream/open()``).
    private var isStarting = false
    weak var input: LoopInputStream?
    weak var output: LoopOutputStream?
    /// The input side is closed or let go of, or this socket serves no input stream.
    private(set) var inputDone: Bool
    /// The output side is closed or let go of, or this socket serves no output stream.
    private(set) var outputDone: Bool
    /// Whether the pair has an output stream (a bound pair's input end has none).
    let servesOutput: Bool

    init(origin: Origin, options: StreamConnection.Options, inputLimit: Int, servesInput: Bool, servesOutput: Bool) {
        self.origin = origin
        var options = options
        // Each direction ends on its own: closing the output stream must leave the input readable.
        options.allowsHalfClosure = true
        self.options = options
        self.inputLimit = inputLimit
        self.inputDone = !servesInput
        self.outputDone = !servesOutput
        self.servesOutput = servesOutput
    }

    /// The connection while it is open.
    var connection: StreamConnection? {
        if case .connected(let connection) = state { connection } else { nil }
    }

    /// Binds the pair to `newLoop` (a pair lives in one loop: a second one is a precondition failure).
    func bind(to newLoop: PortRunLoop, _ what: String) {
        if let loop {
            Misuse.check(loop === newLoop, "\(what): the streams of a pair belong to one loop ('\(loop.name)'), not '\(newLoop.name)'")
        } else {
            loop = newLoop
        }
    }

    /// A stream of the pair opened: makes the connection if it is the first, otherwise tells the
    /// stream what became of it, on a later turn (open is asynchronous).
    func streamOpened(_ stream: LoopStream) {
        switch state {
        case .idle: start()
        case .connecting: break
        case .connected: tell([stream], .opened, deferred: true)
        case .closed: tell([stream], .closed, deferred: true)
        case .failed(let error): tell([stream], .failed(error), deferred: true)
        }
    }

    /// Connects, or wraps the socket-pair end, in the modes the pair is scheduled in (the
    /// common modes if none).
    private func start() {
        guard let loop else { return }
        for mode in (input?.scheduledModes ?? []) + (output?.scheduledModes ?? []) where !modes.contains(mode) {
            modes.append(mode)
        }
        if modes.isEmpty { modes = [.common] }
        isStarting = true
        defer { isStarting = false }
        switch origin {
        case .endpoint(let endpoint, let timeout):
            state = .connecting
            let box = LoopConfined(WeakSocket(self))
            StreamConnection.connect(to: endpoint, on: loop, timeout: timeout, options: options, inModes: modes) { result in
                // Told off the loop's thread only when the loop is gone, and its streams with it.
                guard loop.isCurrentThread else { return }
                guard let socket = box.value.socket else {
                    if case .success(let connection) = result { connection.close() }
                    return
                }
                socket.finishOpening(result)
            }
        case .descriptor(let fd):
            origin = .descriptor(-1)
            do throws(StreamConnectionError) {
                let connection = try StreamConnection(fileDescriptor: fd, loop: loop, options: options, modes: modes, transport: nil)
                finishOpening(.success(connection))
            } catch {
                System.closeDescriptor(fd)
                finishOpening(.failure(error))
            }
        case .unusable(let error):
            finishOpening(.failure(error))
        case .adopted:
            break // served since it was adopted: never idle
        }
    }

    /// The connection is made, or could not be. The streams are told on a later turn when this
    /// happens inside the ``LoopStream/open()`` that started it.
    private func finishOpening(_ result: Result<StreamConnection, StreamConnectionError>) {
        switch result {
        case .success(let connection):
            guard !(inputDone && outputDone) else {
                connection.close()
                state = .closed
                return
            }
            take(connection)
            if inputDone { connection.pauseReading() }
            if outputDone, servesOutput { connection.shutdownOutput() }
            tell([input, output], .opened, deferred: isStarting)
        case .failure(let error):
            state = .failed(error)
            tell([input, output], .failed(error), deferred: isStarting)
        }
    }

    /// Serves the streams from `connection`: its handlers become the socket's.
    private func take(_ connection: StreamConnection) {
        state = .connected(connection)
        connection.onRead = { [weak self] _, bytes in self?.input?.received(bytes) }
        connection.onEvent = { [weak self] _, event in self?.handle(event) }
    }

    /// Serves the streams from a connection made elsewhere (accepted by a listener), from now
    /// on: bytes it reads wait in the input stream until it opens. On the connection's thread.
    func adopt(_ connection: StreamConnection) {
        loop = connection.loop
        modes = connection.modes
        guard connection.isOpen else {
            state = .closed
            return
        }
        take(connection)
    }

    /// What became of the connection, for a stream that opened.
    enum Outcome {
        case opened
        /// Opened, and closed since without an error.
        case closed
        case failed(StreamConnectionError)

        /// Tells `stream`.
        func tell(_ stream: LoopStream) {
            switch self {
            case .opened: stream.socketOpened()
            case .closed: stream.socketOpened(); stream.socketClosed()
            case .failed(let error): stream.socketFailed(error)
            }
        }
    }

    /// Tells each of `streams` still there the `outcome`: now, or on a later turn of the loop in
    /// the modes the socket is served in.
    private func tell(_ streams: [LoopStream?], _ outcome: Outcome, deferred: Bool) {
        let weak = streams.compactMap { $0 }.map(WeakStream.init)
        guard deferred, let loop else {
            for reference in weak { reference.stream.map(outcome.tell) }
            return
        }
        let box = LoopConfined(weak)
        loop.perform(inModes: modes) {
            for reference in box.value { reference.stream.map(outcome.tell) }
        }
    }

    private func handle(_ event: StreamConnectionEvent) {
        switch event {
        case .inputEnded:
            input?.inputEnded()
        case .writabilityChanged:
            output?.writabilityChanged()
        case .outputShutDown:
            break
        case .closed(let error):
            if let error {
                state = .failed(error)
                input?.socketFailed(error)
                output?.socketFailed(error)
            } else {
                state = .closed
                input?.socketClosed()
                output?.socketClosed()
            }
        }
    }

    /// Stops reading while the input stream holds ``inputLimit`` bytes.
    func pauseReading() { connection?.pauseReading() }

    /// Reads again once the input stream's client has made room.
    func resumeReading() {
        guard !inputDone else { return }
        connection?.resumeReading()
    }

    /// The input stream closed (or was let go of): reading stops; with the output done too, the
    /// connection closes (after sending what is queued).
    func inputClosed() {
        guard !inputDone else { return }
        inputDone = true
        guard let connection else { return }
        if outputDone {
            connection.close(afterFlushing: true)
        } else {
            connection.pauseReading()
        }
    }

    /// The output stream closed (or was let go of): the output is shut down once what is queued
    /// is sent (the peer reads end of stream); with the input done too, the connection closes.
    func outputClosed() {
        guard !outputDone else { return }
        outputDone = true
        guard let connection else { return }
        if inputDone {
            connection.close(afterFlushing: true)
        } else {
            connection.shutdownOutput()
        }
    }

    /// A stream of the pair was let go of, on whatever thread: as a close, on the loop's thread.
    func streamReleased(input isInput: Bool) {
        guard let loop, !loop.isCurrentThread else { return directionReleased(input: isInput) }
        let box = LoopConfined(self)
        loop.onOwner { _ in box.value.directionReleased(input: isInput) }
    }

    private func directionReleased(input isInput: Bool) {
        if isInput { inputClosed() } else { outputClosed() }
    }

    deinit {
        if case .descriptor(let fd) = origin, fd >= 0 { System.closeDescriptor(fd) }
    }
}

/// A weak reference to a ``LoopStreamSocket``, for the connect's completion.
struct WeakSocket {
    weak var socket: LoopStreamSocket?
    init(_ socket: LoopStreamSocket) { self.socket = socket }
}
