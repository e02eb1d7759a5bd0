import Foundation
import PortRunLoopKit
import PortRunLoopTestSupport
import Testing

/// ``AsyncStreamConnection/inbound`` with a consumer that falls behind: reading pauses once the
/// buffer passes its limit (the peer's writes stall), and resumes as the consumer drains it; no
/// byte is lost or reordered.
@Suite(.timeLimit(.minutes(1))) struct AsyncStreamInboundBackPressureTests {
    @Test func aConsumerThatFallsBehindPausesReading() async throws {
        let thread = try RunLoopThread(name: "inbound-pressure")
        defer { thread.stop() }
        var options = IncomingStreamConnections.defaultListenerOptions
        options.connection.receiveBufferSize = 128 * 1024
        let limit = 64 * 1024
        let incoming = try StreamListener.incomingConnections(on: .host("127.0.0.1", port: 0), loop: thread.loop,
                                                              options: options, inboundBufferLimit: limit)
        defer { incoming.close() }
        guard let port = incoming.listener.localEndpoint.port else { Issue.record("no port"); return }
        let message = patternBytes(4 * 1024 * 1024)
        // The peer writes it all and closes; its writes block while this side does not read.
        let writing = Task {
            try await offThePool {
                let peer = try RawStreamPeer.connect(port: port)
                peer.setSendBufferSize(128 * 1024)
                try peer.write(message)
                peer.close()
            }
        }
        var connections = incoming.makeAsyncIterator()
        let connection = try #require(await connections.next())
        let inbound = connection.inbound

        // Nobody consumes: the buffer fills to its limit and reading pauses.
        #expect(await eventuallyAsync { inbound.statistics.readingPauses == 1 })
        let paused = inbound.statistics
        #expect(paused.bufferedBytes > limit)
        #expect(paused.bufferedBytes <= limit + 64 * 1024) // at most the read that passed the limit
        #expect(paused.receivedBytes < message.count)
        #expect(!paused.isFinished)

        // The consumer drains it all: reading resumes (and pauses again) until the end.
        var received: [UInt8] = []
        received.reserveCapacity(message.count)
        for try await chunk in inbound { received += chunk }
        try await writing.value
        #expect(received.count == message.count)
        #expect(received == message)
        let end = inbound.statistics
        #expect(end.isFinished)
        #expect(end.bufferedBytes == 0)
        #expect(end.deliveredBytes == message.count)
        #expect(end.readingPauses >= 1)
        await connection.close()
    }
}
