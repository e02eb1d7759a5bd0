import Foundation
import PortRunLoopKit
import PortRunLoopTLS
import Testing
import PortRunLoopTestSupport

/// Our TLS listener against real TLS clients: `openssl s_client` (verifying our certificate,
/// negotiating ALPN, sending and reading bytes, a client certificate) and `curl` (an HTTPS GET).
@Suite(.timeLimit(.minutes(1))) struct TLSServerInteropTests {
    /// Runs `openssl s_client` against `port` with `stdin` as its input (it keeps reading after its
    /// input ends, until the server closes) and returns its status and output.
    private func sClient(port: Int, certificates: TestCertificates, stdin: String, extra: [String] = []) throws -> (status: Int32, output: String) {
        let command = ([TestCertificates.openssl, "s_client", "-connect", "127.0.0.1:\(port)", "-servername", "localhost",
                        "-CAfile", certificates.caCertificate, "-verify_return_error", "-verify_hostname", "localhost",
                        "-ign_eof"] + extra).map { "'\($0)'" }.joined(separator: " ")
        return try runTool("/bin/sh", ["-c", "printf '\(stdin)' | \(command)"], seconds: 20)
    }

    @Test func sClientVerifiesUsNegotiatesALPNAndGetsItsReply() throws {
        let certificates = try TestCertificates()
        let context = try TLSContext(.server(certificateChain: .file(path: certificates.serverCertificate),
                                             privateKey: .file(path: certificates.serverKey),
                                             alpnProtocols: ["x-other", "x-ping"]))
        let thread = try RunLoopThread(name: "tls-server")
        defer { thread.stop() }
        let recorder = ConnectionRecorder(loop: thread.loop) { connection, _ in
            // A whole line came: answer it and close (close_notify follows the answer).
            connection.write("pong\n")
            connection.close(afterFlushing: true)
        }
        let listener = try StreamListener(tlsOn: .host("127.0.0.1", port: 0), context: context, loop: thread.loop) { connection in
            recorder.attach(connection)
        }
        defer { listener.close() }

        let (status, output) = try sClient(port: listener.localEndpoint.port!, certificates: certificates, stdin: "ping\\n",
                                           extra: ["-alpn", "x-ping"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("Verify return code: 0 (ok)"), "\(output)")
        #expect(output.contains("ALPN protocol: x-ping"), "\(output)")
        #expect(output.contains("pong\n"), "\(output)")
        #expect(recorder.log.wait { $0.closeError != nil })
        let log = recorder.log.values
        #expect(log.receivedText == "ping\n")
        #expect(log.details?.alpnProtocol == "x-ping")
        #expect(log.details?.serverName == "localhost")
        #expect(log.details?.peerCertificateSubject == nil) // no client certificate asked for
        #expect(log.closeError == .some(nil))
        #expect(listener.statistics.accepted == 1)
    }

    @Test func curlGetsAnHTTPSResponse() throws {
        let certificates = try TestCertificates()
        let context = try TLSContext(.server(certificateChain: .file(path: certificates.serverCertificate),
                                             privateKey: .file(path: certificates.serverKey),
                                             alpnProtocols: ["http/1.1"]))
        let thread = try RunLoopThread(name: "tls-https")
        defer { thread.stop() }
        let request = Locked("")
        let recorder = ConnectionRecorder(loop: thread.loop) { connection, bytes in
            let text = request.withLock { $0 += String(decoding: bytes, as: UTF8.self); return $0 }
            guard text.contains("\r\n\r\n") else { return }
            let body = "hello over TLS\n"
            connection.write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
            connection.close(afterFlushing: true)
        }
        let listener = try StreamListener(tlsOn: .host("127.0.0.1", port: 0), context: context, loop: thread.loop) { connection in
            recorder.attach(connection)
        }
        defer { listener.close() }
        let port = listener.localEndpoint.port!

        let (status, output) = try runTool("/usr/bin/curl", ["-sS", "--http1.1", "--max-time", "15",
                                                             "--cacert", certificates.caCertificate,
                                                             "--resolve", "localhost:\(port):127.0.0.1",
                                                             "https://localhost:\(port)/hello"])
        #expect(status == 0, "\(output)")
        #expect(output == "hello over TLS\n")
        #expect(request.withLock { $0 }.hasPrefix("GET /hello HTTP/1.1\r\n"))
        #expect(recorder.log.wait { $0.closeError != nil })
        #expect(recorder.log.values.details?.alpnProtocol == "http/1.1")
    }

    @Test func curlRefusesACertificateItDoesNotTrust() throws {
        let certificates = try TestCertificates()
        let context = try TLSContext(.server(certificateChain: .file(path: certificates.serverCertificate),
                                             privateKey: .file(path: certificates.serverKey)))
        let thread = try RunLoopThread(name: "tls-https-untrusted")
        defer { thread.stop() }
        let listener = try StreamListener(tlsOn: .host("127.0.0.1", port: 0), context: context, loop: thread.loop) { _ in
            Issue.record("a handshake the client refused completed")
        }
        defer { listener.close() }
        let port = listener.localEndpoint.port!
        let (status, output) = try runTool("/usr/bin/curl", ["-sS", "--max-time", "15", "--cacert", certificates.otherCACertificate,
                                                             "--resolve", "localhost:\(port):127.0.0.1",
                                                             "https://localhost:\(port)/"])
        #expect(status == 60, "\(output)") // CURLE_PEER_FAILED_VERIFICATION
        #expect(eventually { listener.statistics.dropped == 1 })
    }

    @Test func aRequiredClientCertificateIsVerifiedAndItsSubjectSeen() throws {
        let certificates = try TestCertificates()
        var configuration = TLSConfiguration.server(certificateChain: .file(path: certificates.serverCertificate),
                                                    privateKey: .file(path: certificates.serverKey))
        configuration.trustRoots = .certificates(.file(path: certificates.caCertificate))
        configuration.clientCertificates = .required
        let context = try TLSContext(configuration)
        let thread = try RunLoopThread(name: "tls-client-cert")
        defer { thread.stop() }
        let recorder = ConnectionRecorder(loop: thread.loop) { connection, _ in
            connection.write("pong\n")
            connection.close(afterFlushing: true)
        }
        let listener = try StreamListener(tlsOn: .host("127.0.0.1", port: 0), context: context, loop: thread.loop) { connection in
            recorder.attach(connection)
        }
        defer { listener.close() }

        let (status, output) = try sClient(port: listener.localEndpoint.port!, certificates: certificates, stdin: "ping\\n",
                                           extra: ["-cert", certificates.clientCertificate, "-key", certificates.clientKey])
        #expect(status == 0, "\(output)")
        #expect(output.contains("pong\n"), "\(output)")
        #expect(recorder.log.wait { $0.closeError != nil })
        #expect(recorder.log.values.details?.peerCertificateSubject == "CN=test-client")
    }

    @Test func aClientWithoutTheRequiredCertificateIsDropped() throws {
        let certificates = try TestCertificates()
        var configuration = TLSConfiguration.server(certificateChain: .file(path: certificates.serverCertificate),
                                                    privateKey: .file(path: certificates.serverKey))
        configuration.trustRoots = .certificates(.file(path: certificates.caCertificate))
        configuration.clientCertificates = .required
        let context = try TLSContext(configuration)
        let thread = try RunLoopThread(name: "tls-no-client-cert")
        defer { thread.stop() }
        let listener = try StreamListener(tlsOn: .host("127.0.0.1", port: 0), context: context, loop: thread.loop) { _ in
            Issue.record("a client without a certificate was accepted")
        }
        defer { listener.close() }
        let (_, output) = try sClient(port: listener.localEndpoint.port!, certificates: certificates, stdin: "ping\\n")
        #expect(output.contains("alert certificate required"), "\(output)")
        #expect(eventually { listener.statistics.dropped == 1 })
        #expect(listener.statistics.accepted == 0)
    }
}
