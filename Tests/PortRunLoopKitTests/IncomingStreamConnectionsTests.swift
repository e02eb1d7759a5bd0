import Foundation
import PortRunLoopKit
import PortRunLoopTestSupport
import Testing

/// A listener's connections as an `AsyncSequence`: it ends when the listener closes (after the
/// connections buffered before), a full buffer closes and counts what it cannot take, and
/// cancelling the waiting task closes the listener.
@Suite(.timeLimit(.minutes(1))) struct IncomingStreamConnectionsTests {
    @Test func closingTheListenerEndsTheSequenceAfterTheBufferedConnections() async throws {
        let thread = try RunLoopThread(name: "incoming-close")
        defer { thread.stop() }
        let incoming = try StreamListener.incomingConnections(on: .host("127.0.0.1", port: 0), loop: thread.loop)
        let port = try #require(incoming.listener.localEndpoint.port)
        let peers = try await offThePool { try (0..<2).map { _ in try RawStreamPeer.connect(port: port) } }
        #expect(await eventuallyAsync { incoming.statistics.buffered == 2 })
        incoming.close()
        var taken = 0
        for await connection in incoming {
            #expect(connection.loop === thread.loop)
            taken += 1
        }
        #expect(taken == 2)
        #expect(incoming.listener.isClosed)
        let statistics = incoming.statistics
        #expect(statistics.delivered == 2 && statistics.buffered == 0 && statistics.dropped == 0)
        _ = peers
    }

    @Test func aFullBufferClosesAndCountsTheConnectionsItCannotTake() async throws {
        let thread = try RunLoopThread(name: "incoming-full")
        defer { thread.stop() }
        let incoming = try StreamListener.incomingConnections(on: .host("127.0.0.1", port: 0), loop: thread.loop,
                                                              bufferLimit: 1)
        defer { incoming.close() }
        let port = try #require(incoming.listener.localEndpoint.port)
        let peers = try await offThePool { try (0..<3).map { _ in try RawStreamPeer.connect(port: port) } }
        #expect(await eventuallyAsync { incoming.statistics.dropped == 2 })
        #expect(incoming.statistics.buffered == 1)
        // The dropped connections were closed: their peers read the end. The kept one is open.
        var connections = incoming.makeAsyncIterator()
        let kept = try #require(await connections.next())
        let keptPeer = try #require(peers.first { $0.localPort == kept.remoteEndpoint?.port })
        let ends = try await offThePool { try peers.filter { $0 !== keptPeer }.map { try $0.readToEnd() } }
        #expect(ends == [[], []])
        try await offThePool { try keptPeer.write(Array("still open".utf8)) }
        var inbound = kept.inbound.makeAsyncIterator()
        #expect(try await inbound.next() == Array("still open".utf8))
        await kept.close()
    }

    @Test func cancellingTheWaitingTaskClosesTheListener() async throws {
        let thread = try RunLoopThread(name: "incoming-cancel")
        defer { thread.stop() }
        let incoming = try StreamListener.incomingConnections(on: .host("127.0.0.1", port: 0), loop: thread.loop)
        let waiting = Task { () async -> Int in
            var count = 0
            for await _ in incoming { count += 1 }
            return count
        }
        waiting.cancel()
        #expect(await waiting.value == 0)
        #expect(incoming.listener.isClosed)
        let error = await thrownError { () async throws(StreamConnectionError) in
            _ = try await AsyncStreamConnection.connect(to: incoming.listener.localEndpoint, on: thread.loop, timeout: 5)
        }
        #expect(error == .connectionRefused(incoming.listener.localEndpoint))
    }
}
