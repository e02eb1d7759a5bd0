import Foundation
import PortRunLoopKit
internal import COpenSSL

extension TLSTransport {
    /// What an OpenSSL call of `step` that returned `result` (not success) means: the readiness
    /// it waits for, the end of the stream, or a classified failure. Reads `errno` first.
    func failure(of result: Int32, in step: Step) -> StreamTransportIO {
        let code = errno
        guard let ssl else { return .end }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ:
            return .wouldBlock(.read)
        case SSL_ERROR_WANT_WRITE:
            return .wouldBlock(.write)
        case SSL_ERROR_ZERO_RETURN:
            // The peer's close_notify: the clean end of its stream.
            if step == .read || step == .handshake { return .end }
            return fail(.protocolError, "the peer closed the TLS connection")
        case SSL_ERROR_SYSCALL:
            _ = OpenSSLErrors.drain()
            failed = true
            if code == ECONNRESET || code == EPIPE { return .failed(.peerReset) }
            if code == 0 {
                // The socket's end without close_notify.
                return step == .handshake ? .end : fail(.uncleanShutdown, "the peer closed the connection without close_notify")
            }
            return .failed(.system(call: step == .read || step == .handshake ? "recv" : "send", errno: code))
        default:
            return classifyProtocolFailure(ssl, in: step)
        }
    }

    /// `SSL_ERROR_SSL`: the error queue's last error says what.
    private func classifyProtocolFailure(_ ssl: OpaquePointer, in step: Step) -> StreamTransportIO {
        let reason = portrunloop_tls_error_reason(ERR_peek_last_error())
        let text = OpenSSLErrors.drain()
        failed = true
        if reason == SSL_R_UNEXPECTED_EOF_WHILE_READING {
            return step == .handshake ? .end : fail(.uncleanShutdown, "the peer closed the connection without close_notify")
        }
        if reason == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE || reason == SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED {
            return fail(.missingCertificate, text)
        }
        let verification = SSL_get_verify_result(ssl)
        if step == .handshake, verification != X509_V_OK {
            let words = String(cString: X509_verify_cert_error_string(verification))
            switch Int32(verification) {
            case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH:
                return fail(.hostnameMismatch, "\(words) (\(text))")
            default:
                return fail(.untrustedCertificate, "\(words) (\(text))")
            }
        }
        return fail(step == .handshake ? .handshakeFailed : .protocolError, text)
    }

    private func fail(_ kind: TLSFailure.Kind, _ reason: String) -> StreamTransportIO {
        .failed(.tls(TLSFailure(kind, reason: reason)))
    }

    /// What the completed handshake of `ssl` settled.
    static func details(of ssl: OpaquePointer) -> TLSConnectionDetails {
        var alpn: UnsafePointer<UInt8>?
        var alpnLength: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &alpn, &alpnLength)
        let alpnProtocol = alpn.map { String(decoding: UnsafeBufferPointer(start: $0, count: Int(alpnLength)), as: UTF8.self) }
        var subject: String?
        if let text = portrunloop_tls_peer_subject(ssl) {
            subject = String(cString: text)
            free(text)
        }
        let serverName = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name).map { String(cString: $0) }
        let cipher = portrunloop_tls_cipher_name(ssl).map { String(cString: $0) } ?? ""
        return TLSConnectionDetails(protocolVersion: TLSProtocolVersion(openSSLValue: SSL_version(ssl)), cipherSuite: cipher,
                                    alpnProtocol: alpnProtocol.flatMap { $0.isEmpty ? nil : $0 },
                                    peerCertificateSubject: subject, serverName: serverName)
    }
}
