import Foundation
import PortRunLoopKit
import PortRunLoopTestSupport
import Testing

/// A peer that resets the connection (it closes with `SO_LINGER` 0, so the kernel sends RST):
/// ``AsyncStreamConnection/inbound`` throws ``StreamConnectionError/peerReset`` after what was
/// read before, and later writes throw it too.
@Suite(.timeLimit(.minutes(1))) struct AsyncStreamPeerResetTests {
    @Test func aResetEndsTheInboundSequenceWithAnError() async throws {
        let thread = try RunLoopThread(name: "peer-reset")
        defer { thread.stop() }
        let incoming = try StreamListener.incomingConnections(on: .host("127.0.0.1", port: 0), loop: thread.loop)
        defer { incoming.close() }
        let port = try #require(incoming.listener.localEndpoint.port)
        let peer = try await offThePool { try RawStreamPeer.connect(port: port) }
        var connections = incoming.makeAsyncIterator()
        let connection = try #require(await connections.next())
        try await offThePool { try peer.write(Array("before the reset".utf8)) }

        var inbound = connection.inbound.makeAsyncIterator()
        var received: [UInt8] = []
        while received.count < 16, let chunk = try await inbound.next() { received += chunk }
        #expect(String(decoding: received, as: UTF8.self) == "before the reset")

        peer.reset()
        let error = await thrownError { () async throws(StreamConnectionError) in
            while try await inbound.next() != nil {}
        }
        #expect(error == .peerReset)
        // The sequence ended: it reports the error once, then its end.
        #expect(try await inbound.next() == nil)
        #expect(await thrownError { () async throws(StreamConnectionError) in try await connection.write([1]) } == .peerReset)
    }
}
