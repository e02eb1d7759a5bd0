import Foundation
import PortRunLoopKit
import PortRunLoopTLS
import Testing
import PortRunLoopTestSupport

/// A TLS connection writing to a peer that died: the write fails with
/// ``StreamConnectionError/peerReset`` and the process lives on. The TLS layer writes with
/// `send(MSG_NOSIGNAL)`: with OpenSSL's own socket BIO (`write(2)`), the write after the reset
/// would raise SIGPIPE, whose default action ends the process (this suite's process, when it runs
/// alone, has SIGPIPE at its default action).
@Suite(.timeLimit(.minutes(1))) struct TLSPeerResetTests {
    @Test func writingToADeadPeerIsAPeerResetNotASignal() throws {
        let certificates = try TestCertificates()
        let server = try OpenSSLServer(["-cert", certificates.serverCertificate, "-key", certificates.serverKey, "-naccept", "1"])
        let context = try TLSContext(.client(trustRoots: .certificates(.file(path: certificates.caCertificate))))
        let thread = try RunLoopThread(name: "tls-reset")
        defer { thread.stop() }
        let client = ConnectionRecorder(loop: thread.loop)
        client.connect(to: .host("127.0.0.1", port: server.port), context: context, serverName: "localhost")
        #expect(client.log.wait { $0.details != nil || $0.isFinished })
        // Not reading: the peer's end of stream goes unseen, and only the writes meet the reset.
        let paused = Signal()
        client.perform { connection in
            connection.pauseReading()
            paused.fire()
        }
        #expect(paused.wait())
        // Killed with nothing unread, the peer's socket sends a FIN; the first bytes written after
        // it draw a reset, and a write after that reset fails with EPIPE (the SIGPIPE case).
        server.process.stop()
        // The write is accepted, or, when the peer's kernel answered with a reset at once (it was
        // killed with bytes of ours unread), refused: either way the connection ends with a reset.
        client.perform { connection in
            _ = connection.write([UInt8](repeating: 0x61, count: 4 * 1024 * 1024))
        }
        #expect(client.log.wait { $0.closeError != nil }, "\(client.log.values)")
        #expect(client.log.values.closeError == .some(.peerReset))
    }
}
