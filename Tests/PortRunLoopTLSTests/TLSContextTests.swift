import Foundation
import PortRunLoopKit
import PortRunLoopTLS
import Testing
import PortRunLoopTestSupport

/// Making a ``TLSContext``: the PEM forms it reads, and each configuration it refuses with
/// ``TLSFailure/Kind/invalidConfiguration`` (never a prompt for a passphrase).
@Suite(.timeLimit(.minutes(1))) struct TLSContextTests {
    private func refusal(_ configuration: TLSConfiguration) -> TLSFailure? {
        guard let error = thrownError({ () throws(StreamConnectionError) in _ = try TLSContext(configuration) }) else { return nil }
        if case .tls(let failure) = error { return failure }
        Issue.record("not a TLS failure: \(error)")
        return nil
    }

    @Test func readsPEMTextAndFiles() throws {
        let certificates = try TestCertificates()
        let fromText = try TLSContext(.server(certificateChain: .text(certificates.text(certificates.serverCertificate)),
                                              privateKey: .text(certificates.text(certificates.serverKey)),
                                              alpnProtocols: ["h2", "http/1.1"]))
        #expect(fromText.configuration.alpnProtocols == ["h2", "http/1.1"])
        _ = try TLSContext(.client(trustRoots: .certificates(.text(certificates.text(certificates.caCertificate)))))
        _ = try TLSContext(.client()) // the system's roots
    }

    @Test func refusesWhatItCannotUse() throws {
        let certificates = try TestCertificates()
        let certificate = TLSConfiguration.PEMSource.file(path: certificates.serverCertificate)
        let key = TLSConfiguration.PEMSource.file(path: certificates.serverKey)
        let cases: [(String, TLSConfiguration)] = [
            ("garbage", .server(certificateChain: .text("not a certificate"), privateKey: key)),
            ("truncated PEM", .server(certificateChain: .text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"),
                                      privateKey: key)),
            ("a key of another certificate", .server(certificateChain: certificate, privateKey: .file(path: certificates.clientKey))),
            ("a missing file", .server(certificateChain: .file(path: certificates.directory + "/none.pem"), privateKey: key)),
            ("a certificate without its key", TLSConfiguration(certificateChain: certificate)),
            ("a key without its certificate", TLSConfiguration(privateKey: key)),
            ("garbage roots", .client(trustRoots: .certificates(.text("nothing")))),
            ("an empty ALPN name", .client(alpnProtocols: [""])),
        ]
        for (name, configuration) in cases {
            let failure = refusal(configuration)
            #expect(failure?.kind == .invalidConfiguration, "\(name): \(String(describing: failure))")
        }
    }

    @Test func anEncryptedKeyIsRefusedWithoutAPrompt() throws {
        let certificates = try TestCertificates()
        let encrypted = certificates.directory + "/encrypted.key"
        let (status, output) = try runTool(TestCertificates.openssl, ["pkey", "-in", certificates.serverKey, "-aes256",
                                                                      "-passout", "pass:secret", "-out", encrypted])
        #expect(status == 0, "\(output)")
        let failure = refusal(.server(certificateChain: .file(path: certificates.serverCertificate), privateKey: .file(path: encrypted)))
        #expect(failure?.kind == .invalidConfiguration)
        #expect(failure?.reason.contains("encrypted") == true)
    }

    @Test func aListenerNeedsACertificate() throws {
        let thread = try RunLoopThread(name: "tls-listener-no-cert")
        defer { thread.stop() }
        let context = try TLSContext(.client())
        let error = thrownError { () throws(StreamConnectionError) in
            _ = try StreamListener(tlsOn: .host("127.0.0.1", port: 0), context: context, loop: thread.loop) { _ in }
        }
        guard case .tls(let failure) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(failure.kind == .invalidConfiguration)
    }
}
