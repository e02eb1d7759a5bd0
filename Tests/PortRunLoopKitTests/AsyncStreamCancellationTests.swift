import Foundation
import PortRunLoopKit
import PortRunLoopTestSupport
import Testing

/// Cancelling a task that waits on an ``AsyncStreamConnection`` closes the connection (the peer
/// reads its end), ends that wait with ``StreamConnectionError/cancelled`` (or nil for the inbound
/// sequence), and leaves no task waiting: every task here finishes.
@Suite(.timeLimit(.minutes(1))) struct AsyncStreamCancellationTests {
    /// A connection on `loop` to a raw peer, and the peer.
    private func connectedPair(on loop: PortRunLoop,
                               options: StreamConnection.Options = AsyncStreamConnection.defaultOptions,
                               peerReceiveBuffer: Int32? = nil) async throws -> (AsyncStreamConnection, RawStreamPeer) {
        let listener = try RawStreamListener()
        if let peerReceiveBuffer { listener.setReceiveBufferSize(peerReceiveBuffer) }
        let accepting = Task { try await offThePool { try listener.accept() } }
        let connection = try await AsyncStreamConnection.connect(to: .host("127.0.0.1", port: listener.port), on: loop,
                                                                  options: options)
        return (connection, try await accepting.value)
    }

    @Test func cancellingASuspendedWriteClosesTheConnection() async throws {
        let thread = try RunLoopThread(name: "cancel-write")
        defer { thread.stop() }
        var options = AsyncStreamConnection.defaultOptions
        options.sendBufferSize = 16 * 1024
        options.highWaterMark = 32 * 1024
        options.lowWaterMark = 0
        let (connection, peer) = try await connectedPair(on: thread.loop, options: options, peerReceiveBuffer: 16 * 1024)
        let writes = Locked(0)
        // The peer does not read: the writer soon waits, and waits until it is cancelled.
        let writer = Task { () async -> StreamConnectionError? in
            await thrownError { () async throws(StreamConnectionError) in
                while true {
                    try await connection.write([UInt8](repeating: 7, count: 64 * 1024))
                    writes.withLock { $0 += 1 }
                }
            }
        }
        #expect(await eventuallyAsync { writes.withLock { $0 } >= 1 })
        writer.cancel()
        #expect(await writer.value == .cancelled)
        // What reached the peer's buffers, then the end: the connection is closed.
        let rest = try await offThePool { try peer.readToEnd() }
        #expect(rest.allSatisfy { $0 == 7 })
        #expect(await thrownError { () async throws(StreamConnectionError) in try await connection.write([1]) } == .closed)
    }

    @Test func cancellingATaskWaitingForInputClosesTheConnection() async throws {
        let thread = try RunLoopThread(name: "cancel-read")
        defer { thread.stop() }
        let (connection, peer) = try await connectedPair(on: thread.loop)
        try await offThePool { try peer.write(Array("first".utf8)) }
        let firstChunk = Signal()
        let reader = Task { () async throws -> [[UInt8]] in
            var chunks: [[UInt8]] = []
            for try await chunk in connection.inbound {
                chunks.append(chunk)
                firstChunk.fire()
            }
            return chunks
        }
        // The reader took the first chunk; now it waits for more (none comes) until cancelled.
        #expect(await offThePool { firstChunk.wait() })
        reader.cancel()
        #expect(try await reader.value == [Array("first".utf8)])
        #expect(try await offThePool { try peer.readToEnd() } == [])
        #expect(connection.inbound.statistics.isFinished)
    }

    @Test func anAlreadyCancelledTaskClosesTheConnectionAtItsFirstCall() async throws {
        let thread = try RunLoopThread(name: "cancelled-first")
        defer { thread.stop() }
        let (connection, peer) = try await connectedPair(on: thread.loop)
        let task = Task { () async -> StreamConnectionError? in
            withUnsafeCurrentTask { $0?.cancel() }
            return await thrownError { () async throws(StreamConnectionError) in try await connection.write([1, 2, 3]) }
        }
        #expect(await task.value == .cancelled)
        #expect(try await offThePool { try peer.readToEnd() } == [])
    }

    @Test func cancellingAConnectEndsItsWait() async throws {
        let thread = try RunLoopThread(name: "cancel-connect")
        defer { thread.stop() }
        // A listener with backlog 0 whose queue is full: further SYNs are dropped, so a connect
        // to it waits until its deadline (far away here) unless cancelled.
        let listener = try RawStreamListener(backlog: 0)
        var fillers: [RawStreamPeer] = []
        for _ in 0..<4 { if let filler = try? RawStreamPeer.connectNonBlocking(port: listener.port) { fillers.append(filler) } }
        let task = Task { () async -> StreamConnectionError? in
            await thrownError { () async throws(StreamConnectionError) in
                _ = try await AsyncStreamConnection.connect(to: .host("127.0.0.1", port: listener.port), on: thread.loop, timeout: 45)
            }
        }
        task.cancel()
        // Without the cancellation the wait would end at the deadline, with `.timedOut`.
        #expect(await task.value == .cancelled)
        _ = fillers
    }

    @Test func cancellationsRacingWithTrafficLeaveNoTaskWaiting() async throws {
        let thread = try RunLoopThread(name: "cancel-race")
        defer { thread.stop() }
        for round in 0..<40 {
            let (connection, peer) = try await connectedPair(on: thread.loop)
            let reader = Task { () async -> Int in
                var count = 0
                do { for try await chunk in connection.inbound { count += chunk.count } } catch {}
                return count
            }
            let writer = Task { () async -> StreamConnectionError? in
                await thrownError { () async throws(StreamConnectionError) in
                    for _ in 0..<50 { try await connection.write([UInt8](repeating: 1, count: 4096)) }
                }
            }
            try await offThePool { try peer.write([UInt8](repeating: 2, count: 1000 + round)) }
            if round % 2 == 0 { reader.cancel(); writer.cancel() } else { writer.cancel(); reader.cancel() }
            // Both end, however the cancellations fell: no continuation is left waiting.
            _ = await reader.value
            let error = await writer.value
            #expect(error == nil || error == .cancelled || error == .closed || error == .peerReset)
            _ = try? await offThePool { try peer.readToEnd() }
            await connection.close()
        }
    }
}
