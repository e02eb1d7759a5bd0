import Foundation
import PortRunLoopKit
import PortRunLoopTLS
import Testing
import PortRunLoopTestSupport

/// Our TLS client against `openssl s_server`: verified by name and by address, ALPN negotiated,
/// bytes both ways, a client certificate presented, TLS 1.2 spoken with a server that speaks
/// nothing newer, and refused when the minimum is TLS 1.3.
@Suite(.timeLimit(.minutes(1))) struct TLSClientInteropTests {
    @Test func connectsByNameVerifiesNegotiatesALPNAndRoundTrips() throws {
        let certificates = try TestCertificates()
        let server = try OpenSSLServer(["-cert", certificates.serverCertificate, "-key", certificates.serverKey,
                                        "-alpn", "x-other,x-echo", "-naccept", "1"])
        let context = try TLSContext(.client(trustRoots: .certificates(.file(path: certificates.caCertificate)),
                                             alpnProtocols: ["x-echo"]))
        let thread = try RunLoopThread(name: "tls-client")
        defer { thread.stop() }
        let client = ConnectionRecorder(loop: thread.loop)
        // "localhost": the name is resolved, sent as SNI, and checked against the certificate.
        client.connect(to: .host("localhost", port: server.port), context: context)
        #expect(client.log.wait { $0.details != nil || $0.isFinished })
        let details = try #require(client.log.values.details, "\(client.log.values)")
        #expect(details.alpnProtocol == "x-echo")
        #expect(details.peerCertificateSubject == "CN=localhost")
        #expect(details.serverName == "localhost")
        #expect(!details.cipherSuite.isEmpty)
        #expect(details.protocolVersion == .v1_3)

        client.perform { $0.write("hello tls\n") }
        #expect(client.log.wait { $0.receivedText == "slt olleh\n" || $0.isFinished }, "\(client.log.values)")
        #expect(server.process.wait(for: "CONNECTION ESTABLISHED"))
        #expect(server.process.output.contains("Protocol version: TLSv1.3"))
    }

    @Test func connectsByAddressVerifiedAgainstTheCertificatesIPAddress() throws {
        let certificates = try TestCertificates()
        let server = try OpenSSLServer(["-cert", certificates.serverCertificate, "-key", certificates.serverKey, "-naccept", "1"])
        let context = try TLSContext(.client(trustRoots: .certificates(.file(path: certificates.caCertificate))))
        let thread = try RunLoopThread(name: "tls-client-ip")
        defer { thread.stop() }
        let client = ConnectionRecorder(loop: thread.loop)
        client.connect(to: .host("127.0.0.1", port: server.port), context: context)
        #expect(client.log.wait { $0.details != nil || $0.isFinished })
        let details = try #require(client.log.values.details, "\(client.log.values)")
        #expect(details.serverName == nil) // no SNI for an address
        #expect(details.alpnProtocol == nil)
        client.perform { $0.write("abc\n") }
        #expect(client.log.wait { $0.receivedText == "cba\n" || $0.isFinished }, "\(client.log.values)")
    }

    @Test func presentsAClientCertificate() throws {
        let certificates = try TestCertificates()
        let server = try OpenSSLServer(["-cert", certificates.serverCertificate, "-key", certificates.serverKey,
                                        "-Verify", "1", "-CAfile", certificates.caCertificate, "-verify_return_error",
                                        "-naccept", "1"])
        var configuration = TLSConfiguration.client(trustRoots: .certificates(.file(path: certificates.caCertificate)))
        configuration.certificateChain = .file(path: certificates.clientCertificate)
        configuration.privateKey = .file(path: certificates.clientKey)
        let context = try TLSContext(configuration)
        let thread = try RunLoopThread(name: "tls-client-cert")
        defer { thread.stop() }
        let client = ConnectionRecorder(loop: thread.loop)
        client.connect(to: .host("127.0.0.1", port: server.port), context: context, serverName: "localhost")
        #expect(client.log.wait { $0.details != nil || $0.isFinished })
        client.perform { $0.write("xyz\n") }
        #expect(client.log.wait { $0.receivedText == "zyx\n" || $0.isFinished }, "\(client.log.values)")
        #expect(server.process.wait(for: "CN = test-client"), "\(server.process.output)")
    }

    @Test func speaksTLS12WithAServerLimitedToItUnlessTheMinimumIsHigher() throws {
        let certificates = try TestCertificates()
        let thread = try RunLoopThread(name: "tls-client-1.2")
        defer { thread.stop() }
        let server = try OpenSSLServer(["-cert", certificates.serverCertificate, "-key", certificates.serverKey, "-tls1_2"])
        let context = try TLSContext(.client(trustRoots: .certificates(.file(path: certificates.caCertificate))))
        let client = ConnectionRecorder(loop: thread.loop)
        client.connect(to: .host("127.0.0.1", port: server.port), context: context, serverName: "localhost")
        #expect(client.log.wait { $0.details != nil || $0.isFinished })
        #expect(client.log.values.details?.protocolVersion == .v1_2, "\(client.log.values)")
        client.perform { $0.write("twelve\n") }
        #expect(client.log.wait { $0.receivedText == "evlewt\n" || $0.isFinished }, "\(client.log.values)")
        // s_server serves one connection at a time: end this one before the next.
        client.perform { $0.close() }
        #expect(client.log.wait { $0.closeError != nil })

        var configuration = TLSConfiguration.client(trustRoots: .certificates(.file(path: certificates.caCertificate)))
        configuration.minimumVersion = .v1_3
        let strict = ConnectionRecorder(loop: thread.loop)
        strict.connect(to: .host("127.0.0.1", port: server.port), context: try TLSContext(configuration), serverName: "localhost")
        #expect(strict.log.wait { $0.details != nil || $0.isFinished })
        guard case .tls(let failure) = strict.log.values.connectFailure else { Issue.record("\(strict.log.values)"); return }
        #expect(failure.kind == .handshakeFailed, "\(failure)")
    }
}
