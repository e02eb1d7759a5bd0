import Foundation
import PortRunLoopKit
import PortRunLoopTLS
import Testing
import PortRunLoopTestSupport

/// A TLS listener against peers that do not speak TLS: one that connects and says nothing is
/// dropped at the handshake timeout, one that speaks plain HTTP is dropped at once; neither
/// reaches `onConnection`, and the listener keeps serving.
@Suite(.timeLimit(.minutes(1))) struct TLSListenerTests {
    @Test func peersThatDoNotSpeakTLSAreDropped() throws {
        let certificates = try TestCertificates()
        let context = try TLSContext(.server(certificateChain: .file(path: certificates.serverCertificate),
                                             privateKey: .file(path: certificates.serverKey)))
        let thread = try RunLoopThread(name: "tls-hostile")
        let plain = try RunLoopThread(name: "tls-hostile-peer")
        defer { plain.stop(); thread.stop() }
        var options = StreamListener.Options()
        options.connection.handshakeTimeout = 0.3
        let accepted = Collector<String>()
        let listener = try StreamListener(tlsOn: .host("127.0.0.1", port: 0), context: context, loop: thread.loop,
                                          options: options) { connection in
            accepted.append(connection.tlsDetails?.protocolVersion.description ?? "none")
        }
        defer { listener.close() }

        // A silent peer: the handshake times out and the listener closes it (its end of input).
        let silent = ConnectionRecorder(loop: plain.loop)
        StreamConnection.connect(to: listener.localEndpoint, on: plain.loop) { result in
            if case .success(let connection) = result { silent.attach(connection) } else { silent.log.append(.failed(.loopShutDown)) }
        }
        #expect(silent.log.wait { $0.closeError != nil || $0.connectFailure != nil }, "\(silent.log.values)")
        #expect(silent.log.values.events.first == .inputEnded)
        #expect(listener.statistics.dropped == 1)

        // Plain HTTP: not a TLS record; the handshake fails at once.
        let talker = ConnectionRecorder(loop: plain.loop)
        StreamConnection.connect(to: listener.localEndpoint, on: plain.loop) { result in
            guard case .success(let connection) = result else { talker.log.append(.failed(.loopShutDown)); return }
            talker.attach(connection)
            connection.write("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        }
        #expect(talker.log.wait { $0.closeError != nil || $0.connectFailure != nil }, "\(talker.log.values)")
        #expect(eventually { listener.statistics.dropped == 2 })

        // And a real TLS client still gets through.
        let clientContext = try TLSContext(.client(trustRoots: .certificates(.file(path: certificates.caCertificate))))
        let client = ConnectionRecorder(loop: plain.loop)
        client.connect(to: listener.localEndpoint, context: clientContext, serverName: "localhost")
        #expect(client.log.wait { $0.details != nil || $0.isFinished })
        #expect(accepted.wait(for: 1))
        #expect(listener.statistics.accepted == 1)
    }
}
