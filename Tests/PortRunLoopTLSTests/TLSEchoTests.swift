import Foundation
import PortRunLoopKit
import PortRunLoopTLS
import Testing
import PortRunLoopTestSupport

/// Our TLS client and our TLS server echoing: megabytes through partial TLS writes and the
/// outbound queue on both sides, over TCP and over a Unix socket, with the listener spreading
/// connections over several loops.
@Suite(.timeLimit(.minutes(1))) struct TLSEchoTests {
    /// Echoes `message` through a TLS listener on `endpoint` and returns what came back.
    private func echo(_ message: [UInt8], on endpoint: SocketEndpoint, serverName: String? = nil) throws -> [UInt8] {
        let certificates = try TestCertificates()
        let serverContext = try TLSContext(.server(certificateChain: .file(path: certificates.serverCertificate),
                                                   privateKey: .file(path: certificates.serverKey)))
        let clientContext = try TLSContext(.client(trustRoots: .certificates(.file(path: certificates.caCertificate))))
        let acceptor = try RunLoopThread(name: "tls-echo-accept")
        let servers = try [RunLoopThread(name: "tls-echo-serve-1"), RunLoopThread(name: "tls-echo-serve-2")]
        let clientThread = try RunLoopThread(name: "tls-echo-client")
        defer { clientThread.stop(); servers.forEach { $0.stop() }; acceptor.stop() }
        let listener = try StreamListener(tlsOn: endpoint, context: serverContext, loop: acceptor.loop,
                                          distributingTo: servers.map(\.loop)) { connection in
            connection.onRead = { connection, bytes in connection.write(bytes) }
        }
        defer { listener.close() }

        let received = Locked<[UInt8]>([])
        let queuedAfterWrite = Locked(-1)
        let outcome = Collector<String>()
        StreamConnection.connectTLS(to: listener.localEndpoint, on: clientThread.loop, context: clientContext,
                                    serverName: serverName) { result in
            guard case .success(let connection) = result else { outcome.append("\(result)"); return }
            connection.onRead = { _, bytes in
                let count = received.withLock { $0.append(contentsOf: bytes); return $0.count }
                if count >= message.count { outcome.append("echoed") }
            }
            connection.onEvent = { _, event in if case .closed(let error) = event { outcome.append("closed \(String(describing: error))") } }
            #expect(connection.write(message))
            queuedAfterWrite.withLock { $0 = connection.queuedByteCount }
        }
        #expect(outcome.wait(for: 1, seconds: 45))
        #expect(outcome.values.first == "echoed", "\(outcome.values)")
        // One TLS record went out at once; the rest waited in the outbound queue.
        let queued = queuedAfterWrite.withLock { $0 }
        #expect(message.count <= 16 * 1024 || (queued > 0 && queued < message.count), "queued \(queued)")
        return received.withLock { $0 }
    }

    /// A pattern no shifted copy of itself matches (so a lost or repeated run shows).
    private func pattern(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
    }

    @Test func megabytesEchoOverTCP() throws {
        let message = pattern(4 * 1024 * 1024 + 123)
        let echoed = try echo(message, on: .host("127.0.0.1", port: 0), serverName: "localhost")
        #expect(echoed.count == message.count)
        #expect(echoed == message)
    }

    @Test func echoesOverAUnixSocket() throws {
        let path = NSTemporaryDirectory() + "prl-tls-echo-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        let message = pattern(200_000)
        let echoed = try echo(message, on: .unix(path: path), serverName: "localhost")
        #expect(echoed == message)
    }
}
