import Foundation

extension AsyncStreamConnection {
    /// Connects to `endpoint`, served by `loop`: ``StreamConnection/connect(to:on:timeout:options:inModes:completion:)``
    /// (name resolution off the loop, each address in turn, one deadline for all of it), awaited.
    ///
    /// The default options allow half-closure (see ``defaultOptions``).
    ///
    /// Cancelling the task ends the wait at once with ``StreamConnectionError/cancelled``; the
    /// attempt itself goes on in the background until it connects (the connection is then closed
    /// at once) or fails.
    ///
    /// - Throws: what the connect failed with (``StreamConnectionError/connectionRefused(_:)``,
    ///   ``StreamConnectionError/timedOut(_:)``, ...), ``StreamConnectionError/cancelled``.
    ///
    /// Thread-safety: any thread or task.
    public static func connect(to endpoint: SocketEndpoint, on loop: PortRunLoop, timeout: TimeInterval = 30,
                               options: StreamConnection.Options = defaultOptions,
                               inModes modes: [RunLoop.Mode] = [.common],
                               inboundBufferLimit: Int = defaultInboundBufferLimit) async throws(StreamConnectionError)
        -> AsyncStreamConnection {
        Misuse.check(inboundBufferLimit > 0, "AsyncStreamConnection.connect: inboundBufferLimit must be positive, got \(inboundBufferLimit)")
        guard !Task.isCancelled else { throw .cancelled }
        let outcome = PendingResult<Result<AsyncStreamConnection, StreamConnectionError>>(serving: .synchronousWait)
        StreamConnection.connect(to: endpoint, on: loop, timeout: timeout, options: options, inModes: modes) { result in
            // On the loop's thread. A connection the cancelled task no longer waits for is not
            // kept: the first result set stays, and this one is released, which closes it.
            outcome.finish(result.map { AsyncStreamConnection(wrapping: $0, inboundBufferLimit: inboundBufferLimit) })
        }
        _ = await outcome.value() // nil: the task was cancelled first
        outcome.finish(.failure(.cancelled))
        guard let result = outcome.result else { InternalFailure.fail("AsyncStreamConnection.connect: a wait ended without a result") }
        return try result.get()
    }
}
