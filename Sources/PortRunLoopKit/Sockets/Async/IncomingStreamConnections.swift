import Foundation

/// The connections a ``StreamListener`` accepts, as an `AsyncSequence` of ``AsyncStreamConnection``s:
/// made by ``StreamListener/incomingConnections(on:loop:options:inModes:distributingTo:bufferLimit:inboundBufferLimit:)``
/// (or its ``RunLoopThreadGroup`` form).
///
/// ```swift
/// let incoming = try StreamListener.incomingConnections(on: .host("127.0.0.1", port: 7777), group: group)
/// for await connection in incoming {
///     Task {
///         for try await chunk in connection.inbound { try await connection.write(chunk) }
///         await connection.close()
///     }
/// }
/// ```
///
/// Each connection is served by its loop (with `distributingTo`, the next in turn) and wrapped
/// there. Accepted connections the consumer has not taken yet wait in a buffer of
/// ``bufferLimit``; one accepted while it is full is closed at once and counted in
/// ``Statistics/dropped``.
///
/// **Ending.** The sequence ends (nil) once the listener closed (``close()``, or its loop shut
/// down) and the connections buffered before were taken. Cancelling the task waiting in `next()`
/// closes the listener, closes the buffered connections and ends the sequence.
///
/// Thread-safety: `Sendable`; ``close()`` and ``statistics`` from any thread; iterate from one task
/// at a time.
public struct IncomingStreamConnections: AsyncSequence, Sendable {
    /// An accepted connection.
    ///
    /// Thread-safety: `Sendable`.
    public typealias Element = AsyncStreamConnection
    /// The sequence never throws.
    ///
    /// Thread-safety: not applicable.
    public typealias Failure = Never

    /// The default ``bufferLimit``.
    ///
    /// Thread-safety: a constant.
    public static let defaultBufferLimit = 128

    /// The listener options ``StreamListener/incomingConnections(on:loop:options:inModes:distributingTo:bufferLimit:inboundBufferLimit:)``
    /// uses by default: ``StreamListener/Options``' defaults, with
    /// ``AsyncStreamConnection/defaultOptions`` (half-closure allowed) for the connections.
    ///
    /// Thread-safety: a constant.
    public static let defaultListenerOptions: StreamListener.Options = {
        var options = StreamListener.Options()
        options.connection = AsyncStreamConnection.defaultOptions
        return options
    }()

    /// Counts since the listener was made.
    ///
    /// Thread-safety: a value type; `Sendable`.
    public struct Statistics: Sendable, Hashable {
        /// Connections returned by `next()`.
        ///
        /// Thread-safety: a value type.
        public var delivered: Int
        /// Connections accepted and waiting to be taken.
        ///
        /// Thread-safety: a value type.
        public var buffered: Int
        /// Connections closed at once because the buffer was full or the sequence had ended.
        ///
        /// Thread-safety: a value type.
        public var dropped: Int
    }

    /// The listener (its ``StreamListener/localEndpoint`` and ``StreamListener/statistics``).
    ///
    /// Thread-safety: `Sendable`.
    public let listener: StreamListener
    let buffer: AsyncHandoff<AsyncStreamConnection>

    /// The most accepted connections waiting to be taken.
    ///
    /// Thread-safety: immutable.
    public var bufferLimit: Int { buffer.limit }

    /// A snapshot of the counts.
    ///
    /// Thread-safety: any thread.
    public var statistics: Statistics {
        let counts = buffer.statistics
        return Statistics(delivered: counts.delivered, buffered: counts.buffered, dropped: counts.refused)
    }

    /// Closes the listener: no more connections are accepted; those buffered are still returned,
    /// then the sequence ends. Idempotent.
    ///
    /// Thread-safety: any thread.
    public func close() { listener.close() }

    /// Thread-safety: any thread; iterate from one task at a time.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(incoming: self) }

    /// Iterates ``IncomingStreamConnections``.
    ///
    /// Thread-safety: use from one task at a time (it is not `Sendable`).
    public struct AsyncIterator: AsyncIteratorProtocol {
        let incoming: IncomingStreamConnections

        /// The next accepted connection, waiting for one; nil once the listener closed and the
        /// buffer is empty, or once the task was cancelled.
        ///
        /// Thread-safety: one task at a time.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> AsyncStreamConnection? {
            let listener = incoming.listener
            do {
                return try await incoming.buffer.next(isolation: actor, whenReleased: {}, whenCancelled: { listener.close() })
            } catch {
                InternalFailure.fail("IncomingStreamConnections: the sequence ended with an error: \(error)")
            }
        }

        /// ``next(isolation:)`` without an isolation.
        ///
        /// Thread-safety: one task at a time.
        public mutating func next() async -> AsyncStreamConnection? {
            await next(isolation: nil)
        }
    }
}

extension StreamListener {
    /// Listens on `endpoint`, accepting on `loop`, and returns the accepted connections as an
    /// `AsyncSequence` of ``AsyncStreamConnection``s (see ``IncomingStreamConnections``). The
    /// parameters are those of ``init(on:loop:options:inModes:distributingTo:onConnection:)``;
    /// the default options allow the connections half-closure
    /// (``IncomingStreamConnections/defaultListenerOptions``).
    ///
    /// - Parameters:
    ///   - endpoint: where to listen.
    ///   - loop: the loop that accepts (and serves, unless `servingLoops` is given).
    ///   - options: the listener's options, and its connections'.
    ///   - modes: the modes the listener accepts in and its connections are served in.
    ///   - servingLoops: loops that serve the accepted connections in turn.
    ///   - bufferLimit: the accepted connections that may wait for the consumer.
    ///   - inboundBufferLimit: each connection's ``AsyncStreamConnection/inboundBufferLimit``.
    /// - Throws: what the listener's creation throws.
    ///
    /// Thread-safety: any thread.
    public static func incomingConnections(
        on endpoint: SocketEndpoint, loop: PortRunLoop, options: Options = IncomingStreamConnections.defaultListenerOptions,
        inModes modes: [RunLoop.Mode] = [.common], distributingTo servingLoops: [PortRunLoop] = [],
        bufferLimit: Int = IncomingStreamConnections.defaultBufferLimit,
        inboundBufferLimit: Int = AsyncStreamConnection.defaultInboundBufferLimit
    ) throws(StreamConnectionError) -> IncomingStreamConnections {
        Misuse.check(bufferLimit > 0, "StreamListener.incomingConnections: bufferLimit must be positive, got \(bufferLimit)")
        let buffer = AsyncHandoff<AsyncStreamConnection>(limit: bufferLimit, weigh: { _ in 1 })
        let listener = try StreamListener(on: endpoint, loop: loop, options: options, inModes: modes,
                                          distributingTo: servingLoops) { connection in
            let wrapped = AsyncStreamConnection(wrapping: connection, inboundBufferLimit: inboundBufferLimit)
            if buffer.push(wrapped, refusingPastLimit: true) == .refused {
                connection.loop.currentLogger.debug("PortRunLoop stream listener: an accepted connection was dropped (the consumer's buffer is full)", metadata: [
                    LogKey.loop: "\(connection.loop.name)",
                ])
            } // a refused connection is released here, which closes it
        }
        listener.observeClose { buffer.finish(nil) }
        return IncomingStreamConnections(listener: listener, buffer: buffer)
    }

    /// ``incomingConnections(on:loop:options:inModes:distributingTo:bufferLimit:inboundBufferLimit:)``
    /// accepting on the group's first loop and spreading the connections over all its loops.
    ///
    /// - Parameters:
    ///   - endpoint: where to listen.
    ///   - group: the loops that serve the connections in turn; the first also accepts.
    ///   - options: the listener's options, and its connections'.
    ///   - modes: the modes the listener accepts in and its connections are served in.
    ///   - bufferLimit: the accepted connections that may wait for the consumer.
    ///   - inboundBufferLimit: each connection's ``AsyncStreamConnection/inboundBufferLimit``.
    /// - Throws: what the listener's creation throws.
    ///
    /// Thread-safety: any thread.
    public static func incomingConnections(
        on endpoint: SocketEndpoint, group: RunLoopThreadGroup, options: Options = IncomingStreamConnections.defaultListenerOptions,
        inModes modes: [RunLoop.Mode] = [.common],
        bufferLimit: Int = IncomingStreamConnections.defaultBufferLimit,
        inboundBufferLimit: Int = AsyncStreamConnection.defaultInboundBufferLimit
    ) throws(StreamConnectionError) -> IncomingStreamConnections {
        try incomingConnections(on: endpoint, loop: group.loops[0], options: options, inModes: modes,
                                distributingTo: group.loops, bufferLimit: bufferLimit,
                                inboundBufferLimit: inboundBufferLimit)
    }
}
