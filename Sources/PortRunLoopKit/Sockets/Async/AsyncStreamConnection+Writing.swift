import Foundation

extension AsyncStreamConnection {
    /// Queues `bytes` for sending and returns once the outbound queue is below its high-water mark
    /// (``StreamConnection/Options/highWaterMark``): at once while the peer keeps up; otherwise
    /// the task stays suspended until the queue drained to the low-water mark. Returning means the
    /// bytes are queued in order, not that the peer has read them (``close()`` sends them before
    /// it closes).
    ///
    /// - Throws: ``StreamConnectionError/closed`` when the connection is closed or its output shut
    ///   down; the error that closed it while the task waited (``StreamConnectionError/peerReset``,
    ///   ``StreamConnectionError/outboundLimitExceeded(limit:)`` for a single write larger than the
    ///   limit); ``StreamConnectionError/cancelled`` when the task was cancelled, which closed the
    ///   connection; ``StreamConnectionError/loopShutDown``.
    ///
    /// Thread-safety: any thread or task; concurrent writes are queued in the order they reach the
    /// loop.
    public func write(_ bytes: [UInt8]) async throws(StreamConnectionError) {
        guard !bytes.isEmpty else { return }
        try await onLoop { core, done in core.write(bytes, done) }.get()
    }

    /// Sends everything queued, then shuts the output down (the peer reads end of stream; see
    /// ``StreamConnection/shutdownOutput()``), and returns once it is. Input may go on arriving
    /// when the connection allows half-closure (``StreamConnection/Options/allowsHalfClosure``).
    ///
    /// - Throws: the error that closed the connection first, ``StreamConnectionError/closed`` if
    ///   it was closed, ``StreamConnectionError/cancelled`` (the task was cancelled, which closed
    ///   the connection), ``StreamConnectionError/loopShutDown``.
    ///
    /// Thread-safety: any thread or task.
    public func shutdownOutput() async throws(StreamConnectionError) {
        try await onLoop { core, done in core.shutdownOutput(done) }.get()
    }

    /// Sends what is queued, closes the connection, and returns once it is closed. A peer that does
    /// not read keeps the queue from draining: cancel the task to close at once, dropping what is
    /// queued. Idempotent.
    ///
    /// Thread-safety: any thread or task.
    public func close() async {
        _ = await onLoop { core, done in core.close(done) }
    }

    /// Runs `operation` on the loop's thread with a completion it finishes (at once or later), and
    /// waits for it. A cancellation of the task ends the wait with ``StreamConnectionError/cancelled``
    /// (unless the operation had finished first) and closes the connection.
    func onLoop(_ operation: @escaping @Sendable (AsyncConnectionCore, AsyncConnectionCore.Completion) -> Void) async
        -> Result<Void, StreamConnectionError> {
        guard !Task.isCancelled else {
            closeNow()
            return .failure(.cancelled)
        }
        let done = AsyncConnectionCore.Completion(serving: .synchronousWait)
        let core = self.core
        if !loop.onOwner({ _ in operation(core.value, done) }) { done.finish(.failure(.loopShutDown)) }
        _ = await done.value() // nil: the task was cancelled first
        // The first result set stays: the loop's, or this cancellation's.
        done.finish(.failure(.cancelled))
        guard let result = done.result else { InternalFailure.fail("AsyncStreamConnection: a wait ended without a result") }
        if case .failure(.cancelled) = result { closeNow() }
        return result
    }
}
