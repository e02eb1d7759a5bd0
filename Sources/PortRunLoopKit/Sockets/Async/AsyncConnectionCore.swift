import Foundation

/// The state of an ``AsyncStreamConnection`` that lives on its loop: the ``StreamConnection``
/// itself, whose handlers it takes over, and the tasks waiting on it (each a ``PendingResult``
/// the loop finishes: for writability, for the output's shutdown, for the close).
///
/// Every method runs on the loop's thread: tasks reach it through ``PortRunLoop/onOwner(_:)``,
/// and the connection's handlers call it there. A wait is finished exactly once (the first result
/// set on a ``PendingResult`` stays), and every list is emptied when the connection closes, so no
/// task is left waiting on a closed connection.
///
/// Thread-safety: not `Sendable`; the loop's thread only.
final class AsyncConnectionCore {
    typealias Completion = PendingResult<Result<Void, StreamConnectionError>>

    let connection: StreamConnection
    let inbound: AsyncHandoff<[UInt8]>
    /// Writers whose bytes are queued, waiting for the queue to drain below the low-water mark.
    private var writeWaits: [Completion] = []
    /// ``AsyncStreamConnection/shutdownOutput()`` calls waiting for the shutdown to be sent.
    private var shutdownWaits: [Completion] = []
    /// ``AsyncStreamConnection/close()`` calls waiting for the close.
    private var closeWaits: [Completion] = []
    /// nil while open; once ``StreamConnectionEvent/closed(_:)`` came, its error (`.some(nil)`:
    /// a clean close).
    private var closedWith: StreamConnectionError??

    /// Takes `connection` over (its handlers are replaced). Loop thread only.
    init(connection: StreamConnection, inboundBufferLimit: Int) {
        self.connection = connection
        self.inbound = AsyncHandoff(limit: inboundBufferLimit, weigh: { $0.count })
        connection.onRead = { [self] _, bytes in self.received(bytes) }
        connection.onEvent = { [self] _, event in self.handle(event) }
        if !connection.isOpen {
            // Closed before it was wrapped: its close was reported to the handler it had then.
            closedWith = .some(nil)
            inbound.finish(nil)
        } else if connection.inputEnded {
            inbound.finish(nil)
        }
    }

    private func received(_ bytes: UnsafeRawBufferPointer) {
        if inbound.push([UInt8](bytes), refusingPastLimit: false) == .held { connection.pauseReading() }
    }

    private func handle(_ event: StreamConnectionEvent) {
        switch event {
        case .inputEnded:
            inbound.finish(nil)
        case .writabilityChanged(let writable):
            if writable { finishAll(&writeWaits, .success(())) }
        case .outputShutDown:
            finishAll(&shutdownWaits, .success(()))
        case .closed(let error):
            closedWith = .some(error)
            inbound.finish(error)
            let failure = Result<Void, StreamConnectionError>.failure(error ?? .closed)
            finishAll(&writeWaits, failure)
            finishAll(&shutdownWaits, failure)
            finishAll(&closeWaits, .success(()))
        }
    }

    private func finishAll(_ waits: inout [Completion], _ result: Result<Void, StreamConnectionError>) {
        let finishing = waits
        waits = []
        for wait in finishing { wait.finish(result) }
    }

    /// Queues `bytes`; `done` is finished once the queue is below the high-water mark (at once, or
    /// when it drained to the low one), or with the error that closed the connection.
    func write(_ bytes: [UInt8], _ done: Completion) {
        if let closed = closedWith { done.finish(.failure(closed ?? .closed)); return }
        guard connection.write(bytes) else {
            if connection.isOpen {
                done.finish(.failure(.closed)) // its output is shut down, or it closes after a flush
            } else {
                writeWaits.append(done) // closed by this write (its limit, a reset): told with the close
            }
            return
        }
        if connection.isWritable { done.finish(.success(())) } else { writeWaits.append(done) }
    }

    /// Shuts the output down once everything queued is sent; `done` is finished then, or with the
    /// error that closed the connection first.
    func shutdownOutput(_ done: Completion) {
        if let closed = closedWith { done.finish(.failure(closed ?? .closed)); return }
        connection.shutdownOutput()
        if connection.outputShutDown { done.finish(.success(())) } else { shutdownWaits.append(done) }
    }

    /// Closes after sending what is queued; `done` is finished once closed.
    func close(_ done: Completion) {
        if closedWith != nil { done.finish(.success(())); return }
        closeWaits.append(done)
        connection.close(afterFlushing: true)
    }

    /// Closes now, dropping what is queued: a waiting task was cancelled, or the connection's
    /// last reference went away.
    func closeNow() {
        connection.close()
    }

    /// The consumer drained the inbound buffer after it had paused reading.
    func resumeReading() {
        guard connection.isOpen else { return }
        connection.resumeReading()
    }
}
