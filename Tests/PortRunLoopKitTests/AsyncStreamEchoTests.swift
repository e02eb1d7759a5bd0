import Foundation
import PortRunLoopKit
import PortRunLoopTestSupport
import Testing

/// ``AsyncStreamConnection`` end to end: an echo server and its client written with the async API
/// only, a connection wrapped in a listener's handler, the endpoints, and a typed connect failure.
@Suite(.timeLimit(.minutes(1))) struct AsyncStreamEchoTests {
    /// Echoes `connection`'s input until its end, then closes.
    private static func echo(_ connection: AsyncStreamConnection) async throws {
        for try await chunk in connection.inbound {
            try await connection.write(chunk)
        }
        await connection.close()
    }

    /// Sends `message` over `connection` while reading what comes back, shuts the output down and
    /// returns everything read until the end of input.
    private static func exchange(_ message: [UInt8], over connection: AsyncStreamConnection) async throws -> [UInt8] {
        async let echoed = { () async throws -> [UInt8] in
            var bytes: [UInt8] = []
            for try await chunk in connection.inbound { bytes += chunk }
            return bytes
        }()
        var offset = 0
        while offset < message.count { // several writes, so that some wait for the queue to drain
            let end = min(offset + 100_000, message.count)
            try await connection.write(Array(message[offset..<end]))
            offset = end
        }
        try await connection.shutdownOutput()
        return try await echoed
    }

    @Test func anEchoRoundTripUsesTheAsyncAPIOnBothSides() async throws {
        let server = try RunLoopThread(name: "async-echo-server")
        let client = try RunLoopThread(name: "async-echo-client")
        defer { client.stop(); server.stop() }
        let incoming = try StreamListener.incomingConnections(on: .host("127.0.0.1", port: 0), loop: server.loop)
        defer { incoming.close() }
        let serving = Task {
            var iterator = incoming.makeAsyncIterator()
            guard let connection = await iterator.next() else { return false }
            try await Self.echo(connection)
            return true
        }
        let message = patternBytes(1_500_000)
        let connection = try await AsyncStreamConnection.connect(to: incoming.listener.localEndpoint, on: client.loop)
        #expect(connection.loop === client.loop)
        #expect(connection.remoteEndpoint == incoming.listener.localEndpoint)
        let echoed = try await Self.exchange(message, over: connection)
        #expect(echoed.count == message.count)
        #expect(echoed == message)
        #expect(try await serving.value)
        await connection.close()
        #expect(incoming.statistics.delivered == 1)
    }

    @Test func aConnectionWrappedInAListenersHandlerEchoes() async throws {
        let server = try RunLoopThread(name: "wrap-server")
        let client = try RunLoopThread(name: "wrap-client")
        defer { client.stop(); server.stop() }
        let served = Recorder<Bool>()
        var options = StreamListener.Options()
        options.connection = AsyncStreamConnection.defaultOptions
        let listener = try StreamListener(on: .host("127.0.0.1", port: 0), loop: server.loop, options: options) { connection in
            let wrapped = AsyncStreamConnection(wrapping: connection)
            #expect(wrapped.loop === server.loop)
            #expect(wrapped.localEndpoint == connection.localEndpoint)
            Task {
                do {
                    try await Self.echo(wrapped)
                    served.append(true)
                } catch {
                    served.append(false)
                }
            }
        }
        defer { listener.close() }
        let connection = try await AsyncStreamConnection.connect(to: listener.localEndpoint, on: client.loop)
        let echoed = try await Self.exchange(Array("hello, wrapped".utf8), over: connection)
        #expect(String(decoding: echoed, as: UTF8.self) == "hello, wrapped")
        #expect(await eventuallyAsync { served.count == 1 })
        #expect(served.values == [true])
    }

    @Test func aWriteAfterTheCloseThrowsClosed() async throws {
        let server = try RunLoopThread(name: "closed-server")
        defer { server.stop() }
        let incoming = try StreamListener.incomingConnections(on: .host("127.0.0.1", port: 0), loop: server.loop)
        defer { incoming.close() }
        let connection = try await AsyncStreamConnection.connect(to: incoming.listener.localEndpoint, on: server.loop)
        await connection.close()
        await connection.close() // idempotent
        #expect(await thrownError { () async throws(StreamConnectionError) in try await connection.write([1]) } == .closed)
        #expect(await thrownError { () async throws(StreamConnectionError) in try await connection.shutdownOutput() } == .closed)
        var inbound = connection.inbound.makeAsyncIterator()
        #expect(try await inbound.next() == nil)
    }

    @Test func aRefusedConnectIsATypedError() async throws {
        let thread = try RunLoopThread(name: "async-refused")
        defer { thread.stop() }
        let listener = try StreamListener(on: .host("127.0.0.1", port: 0), loop: thread.loop) { _ in }
        let endpoint = listener.localEndpoint
        listener.close()
        _ = try await thread.loop.submit {} // the listening socket is closed on the loop's thread
        let error = await thrownError { () async throws(StreamConnectionError) in
            _ = try await AsyncStreamConnection.connect(to: endpoint, on: thread.loop, timeout: 5)
        }
        #expect(error == .connectionRefused(endpoint))
    }
}
