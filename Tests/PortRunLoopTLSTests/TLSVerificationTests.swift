import Foundation
import PortRunLoopKit
import PortRunLoopTLS
import Testing
import PortRunLoopTestSupport

/// Our TLS client refusing servers it must not trust, each with its ``TLSFailure/Kind``: a name
/// the certificate does not carry, a CA it does not know, a self-signed certificate; what turning
/// verification off lets through; and our server refusing our client without the certificate it
/// requires.
@Suite(.timeLimit(.minutes(1))) struct TLSVerificationTests {
    /// Connects to `server` with `configuration` and returns the connect's failure (nil when it
    /// connected).
    private func connectFailure(to server: OpenSSLServer, _ configuration: TLSConfiguration, host: String = "127.0.0.1",
                                serverName: String? = nil) throws -> StreamConnectionError? {
        let context = try TLSContext(configuration)
        let thread = try RunLoopThread(name: "tls-verify")
        defer { thread.stop() }
        let client = ConnectionRecorder(loop: thread.loop)
        client.connect(to: .host(host, port: server.port), context: context, serverName: serverName)
        #expect(client.log.wait { $0.details != nil || $0.isFinished })
        return client.log.values.connectFailure
    }

    private func kind(_ error: StreamConnectionError?) -> TLSFailure.Kind? {
        if case .tls(let failure) = error { failure.kind } else { nil }
    }

    @Test func aNameTheCertificateDoesNotCarryIsAHostnameMismatch() throws {
        let certificates = try TestCertificates()
        let server = try OpenSSLServer(["-cert", certificates.serverCertificate, "-key", certificates.serverKey])
        let error = try connectFailure(to: server, .client(trustRoots: .certificates(.file(path: certificates.caCertificate))),
                                       serverName: "wrong.example")
        #expect(kind(error) == .hostnameMismatch, "\(String(describing: error))")
        #expect("\(String(describing: error))".contains("hostname mismatch"))
    }

    @Test func anUnknownCAIsUntrusted() throws {
        let certificates = try TestCertificates()
        let server = try OpenSSLServer(["-cert", certificates.serverCertificate, "-key", certificates.serverKey])
        let error = try connectFailure(to: server, .client(trustRoots: .certificates(.file(path: certificates.otherCACertificate))),
                                       serverName: "localhost")
        #expect(kind(error) == .untrustedCertificate, "\(String(describing: error))")
    }

    @Test func aSelfSignedCertificateIsUntrusted() throws {
        let certificates = try TestCertificates()
        // The other CA's own certificate, self-signed, presented as a server's.
        let server = try OpenSSLServer(["-cert", certificates.otherCACertificate, "-key", certificates.directory + "/other-ca.key"])
        let error = try connectFailure(to: server, .client(trustRoots: .certificates(.file(path: certificates.caCertificate))),
                                       serverName: "localhost")
        #expect(kind(error) == .untrustedCertificate, "\(String(describing: error))")
        #expect("\(String(describing: error))".contains("self-signed"))
    }

    @Test func withoutVerificationAnyCertificateIsAccepted() throws {
        let certificates = try TestCertificates()
        let server = try OpenSSLServer(["-cert", certificates.serverCertificate, "-key", certificates.serverKey])
        var configuration = TLSConfiguration.client(trustRoots: .certificates(.file(path: certificates.otherCACertificate)))
        configuration.verifiesPeer = false
        #expect(try connectFailure(to: server, configuration, serverName: "wrong.example") == nil)
    }

    @Test func aUnixSocketWithoutAServerNameCannotBeVerified() throws {
        let certificates = try TestCertificates()
        let context = try TLSContext(.client(trustRoots: .certificates(.file(path: certificates.caCertificate))))
        let serverContext = try TLSContext(.server(certificateChain: .file(path: certificates.serverCertificate),
                                                   privateKey: .file(path: certificates.serverKey)))
        let thread = try RunLoopThread(name: "tls-unix-verify")
        defer { thread.stop() }
        let path = NSTemporaryDirectory() + "prl-tls-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        let listener = try StreamListener(tlsOn: .unix(path: path), context: serverContext, loop: thread.loop) { _ in }
        defer { listener.close() }
        let client = ConnectionRecorder(loop: thread.loop)
        client.connect(to: .unix(path: path), context: context)
        #expect(client.log.wait { $0.isFinished })
        #expect(kind(client.log.values.connectFailure) == .invalidConfiguration)

        // With the name the certificate carries, the same socket verifies.
        let named = ConnectionRecorder(loop: thread.loop)
        named.connect(to: .unix(path: path), context: context, serverName: "localhost")
        #expect(named.log.wait { $0.details != nil || $0.isFinished })
        #expect(named.log.values.details?.peerCertificateSubject == "CN=localhost", "\(named.log.values)")
    }

    @Test func aServerRequiringACertificateRefusesAClientWithoutOne() throws {
        let certificates = try TestCertificates()
        var serverConfiguration = TLSConfiguration.server(certificateChain: .file(path: certificates.serverCertificate),
                                                          privateKey: .file(path: certificates.serverKey))
        serverConfiguration.trustRoots = .certificates(.file(path: certificates.caCertificate))
        serverConfiguration.clientCertificates = .required
        let serverContext = try TLSContext(serverConfiguration)
        let clientContext = try TLSContext(.client(trustRoots: .certificates(.file(path: certificates.caCertificate))))
        let thread = try RunLoopThread(name: "tls-required-cert")
        defer { thread.stop() }
        let listener = try StreamListener(tlsOn: .host("127.0.0.1", port: 0), context: serverContext, loop: thread.loop) { _ in
            Issue.record("a client without a certificate was accepted")
        }
        defer { listener.close() }
        let client = ConnectionRecorder(loop: thread.loop)
        client.connect(to: listener.localEndpoint, context: clientContext, serverName: "localhost")
        // TLS 1.3: the client's handshake completes before the server checks its certificate, so
        // the refusal (the certificate_required alert) may come as the first read's failure.
        #expect(client.log.wait { $0.isFinished })
        let error = client.log.values.connectFailure ?? client.log.values.closeError ?? nil
        #expect(kind(error) == .missingCertificate, "\(String(describing: error))")
        #expect(eventually { listener.statistics.dropped == 1 })
    }
}
