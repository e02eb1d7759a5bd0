import Foundation
import PortRunLoopKit
import PortRunLoopTLS
import Testing
import PortRunLoopTestSupport

/// How TLS connections end: `close_notify` both ways between our client and our server (each
/// side reads a clean end of input), a real client's `close_notify`, and a peer that goes away
/// without one (``TLSFailure/Kind/uncleanShutdown``).
@Suite(.timeLimit(.minutes(1))) struct TLSShutdownTests {
    @Test func closeNotifyBothWaysIsACleanEndOnEachSide() throws {
        let certificates = try TestCertificates()
        let serverContext = try TLSContext(.server(certificateChain: .file(path: certificates.serverCertificate),
                                                   privateKey: .file(path: certificates.serverKey)))
        let clientContext = try TLSContext(.client(trustRoots: .certificates(.file(path: certificates.caCertificate))))
        let server = try RunLoopThread(name: "tls-shutdown-server")
        let clientThread = try RunLoopThread(name: "tls-shutdown-client")
        defer { clientThread.stop(); server.stop() }
        var options = StreamListener.Options()
        options.connection.allowsHalfClosure = true
        let serverSide = ConnectionRecorder(loop: server.loop)
        let listener = try StreamListener(tlsOn: .host("127.0.0.1", port: 0), context: serverContext, loop: server.loop,
                                          options: options) { connection in
            serverSide.attach(connection)
            connection.onEvent = { connection, event in
                serverSide.log.append(.event(event))
                // The client's close_notify: answer, then send ours.
                if event == .inputEnded {
                    connection.write("bye\n")
                    connection.shutdownOutput()
                }
            }
        }
        defer { listener.close() }
        var clientOptions = StreamConnection.Options()
        clientOptions.allowsHalfClosure = true
        let client = ConnectionRecorder(loop: clientThread.loop)
        client.connect(to: listener.localEndpoint, context: clientContext, serverName: "localhost", options: clientOptions)
        #expect(client.log.wait { $0.details != nil || $0.isFinished })
        client.perform { connection in
            connection.write("last words\n")
            connection.shutdownOutput()
        }
        #expect(client.log.wait { $0.closeError != nil }, "\(client.log.values)")
        #expect(serverSide.log.wait { $0.closeError != nil }, "\(serverSide.log.values)")
        #expect(client.log.values.receivedText == "bye\n")
        #expect(client.log.values.events == [.outputShutDown, .inputEnded, .closed(nil)])
        #expect(serverSide.log.values.receivedText == "last words\n")
        #expect(serverSide.log.values.events == [.inputEnded, .outputShutDown, .closed(nil)])
    }

    @Test func aClosedConnectionSendsCloseNotify() throws {
        // Our server closes (after flushing) without shutting its output down first: the client
        // still reads a clean end, not a cut connection.
        let certificates = try TestCertificates()
        let serverContext = try TLSContext(.server(certificateChain: .file(path: certificates.serverCertificate),
                                                   privateKey: .file(path: certificates.serverKey)))
        let clientContext = try TLSContext(.client(trustRoots: .certificates(.file(path: certificates.caCertificate))))
        let server = try RunLoopThread(name: "tls-close-server")
        let clientThread = try RunLoopThread(name: "tls-close-client")
        defer { clientThread.stop(); server.stop() }
        let listener = try StreamListener(tlsOn: .host("127.0.0.1", port: 0), context: serverContext, loop: server.loop) { connection in
            connection.write("goodbye\n")
            connection.close(afterFlushing: true)
        }
        defer { listener.close() }
        let client = ConnectionRecorder(loop: clientThread.loop)
        client.connect(to: listener.localEndpoint, context: clientContext, serverName: "localhost")
        #expect(client.log.wait { $0.closeError != nil || $0.connectFailure != nil }, "\(client.log.values)")
        #expect(client.log.values.receivedText == "goodbye\n")
        #expect(client.log.values.events == [.inputEnded, .closed(nil)])
    }

    @Test func sClientsCloseNotifyIsACleanEndOfInput() throws {
        let certificates = try TestCertificates()
        let context = try TLSContext(.server(certificateChain: .file(path: certificates.serverCertificate),
                                             privateKey: .file(path: certificates.serverKey)))
        let thread = try RunLoopThread(name: "tls-sclient-close")
        defer { thread.stop() }
        let recorder = ConnectionRecorder(loop: thread.loop)
        let listener = try StreamListener(tlsOn: .host("127.0.0.1", port: 0), context: context, loop: thread.loop) { connection in
            recorder.attach(connection)
        }
        defer { listener.close() }
        // Without -ign_eof, s_client sends close_notify when its input ends.
        let command = "printf 'done\\n' | '\(TestCertificates.openssl)' s_client -connect 127.0.0.1:\(listener.localEndpoint.port!) "
            + "-servername localhost -CAfile '\(certificates.caCertificate)' -verify_return_error"
        let (status, output) = try runTool("/bin/sh", ["-c", command])
        #expect(status == 0, "\(output)")
        #expect(recorder.log.wait { $0.closeError != nil }, "\(recorder.log.values)")
        #expect(recorder.log.values.receivedText == "done\n")
        #expect(recorder.log.values.events == [.inputEnded, .closed(nil)])
    }

    @Test func aPeerGoneWithoutCloseNotifyIsAnUncleanShutdown() throws {
        let certificates = try TestCertificates()
        let server = try OpenSSLServer(["-cert", certificates.serverCertificate, "-key", certificates.serverKey, "-naccept", "1"])
        let context = try TLSContext(.client(trustRoots: .certificates(.file(path: certificates.caCertificate))))
        let thread = try RunLoopThread(name: "tls-unclean")
        defer { thread.stop() }
        let client = ConnectionRecorder(loop: thread.loop)
        client.connect(to: .host("127.0.0.1", port: server.port), context: context, serverName: "localhost")
        #expect(client.log.wait { $0.details != nil || $0.isFinished })
        client.perform { $0.write("ab\n") }
        // The reply means s_server read everything sent to it: killed, it closes with a FIN, not a reset.
        #expect(client.log.wait { $0.receivedText == "ba\n" || $0.isFinished })
        server.process.stop()
        #expect(client.log.wait { $0.closeError != nil })
        let error = client.log.values.closeError ?? nil
        guard case .tls(let failure) = error else { Issue.record("closed with \(String(describing: error))"); return }
        #expect(failure.kind == .uncleanShutdown, "\(failure)")
    }
}
