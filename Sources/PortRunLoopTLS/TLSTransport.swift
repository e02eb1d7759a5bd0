import Foundation
import PortRunLoopKit
internal import COpenSSL

/// TLS over a connection's socket: an OpenSSL `SSL` whose BIO reads and writes the descriptor
/// (``SocketBIO``), driven by the connection's readiness. OpenSSL runs the protocol; this type
/// maps `SSL_ERROR_WANT_READ`/`WANT_WRITE` to the readiness the connection waits for, and
/// OpenSSL's failures to `TLSFailure` kinds.
///
/// Thread-safety: the connection's loop thread only (as `StreamTransport`); made on it.
final class TLSTransport: StreamTransport {
    /// Which end of the handshake this is.
    enum Role {
        /// A client, verifying the server's certificate against `serverName` when there is one.
        case client(serverName: String?)
        case server
    }

    /// The step an OpenSSL call belonged to, for classifying its failure.
    enum Step {
        case handshake, read, write, shutdown
    }

    /// Held so that the context (and its ALPN list) outlives the connection.
    let context: TLSContext
    let role: Role
    private(set) var ssl: OpaquePointer?
    /// What the handshake settled, kept after the connection closes.
    private(set) var details: TLSConnectionDetails?
    /// A fatal error happened: OpenSSL must not be asked to send `close_notify` any more.
    var failed = false
    private var sentCloseNotify = false

    /// The transport of a socket connected (`.client`) or accepted (`.server`) with `context`.
    init(context: TLSContext, fileDescriptor: Int32, role: Role) throws(StreamConnectionError) {
        self.context = context
        self.role = role
        ERR_clear_error()
        guard let ssl = SSL_new(context.context) else {
            throw .tls(TLSFailure(.handshakeFailed, reason: "SSL_new failed: \(OpenSSLErrors.drain())"))
        }
        guard let bio = SocketBIO.make(fileDescriptor: fileDescriptor) else {
            SSL_free(ssl)
            throw .tls(TLSFailure(.handshakeFailed, reason: "BIO_new failed: \(OpenSSLErrors.drain())"))
        }
        SSL_set_bio(ssl, bio, bio) // one reference, owned by the SSL from here
        self.ssl = ssl
        do throws(StreamConnectionError) {
            switch role {
            case .client(let serverName): try setUpClient(ssl, serverName: serverName)
            case .server: setUpServer(ssl)
            }
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    private func setUpClient(_ ssl: OpaquePointer, serverName: String?) throws(StreamConnectionError) {
        SSL_set_connect_state(ssl)
        let configuration = context.configuration
        let isAddress = serverName.map(Self.isNumericAddress) ?? false
        if let serverName, !isAddress, portrunloop_tls_set_server_name(ssl, serverName) != 1 {
            throw TLSContext.invalid("the server name \"\(serverName)\" was refused for SNI: \(OpenSSLErrors.drain())")
        }
        guard configuration.verifiesPeer else {
            portrunloop_tls_set_verify(ssl, SSL_VERIFY_NONE, 0)
            return
        }
        guard let serverName else {
            throw TLSContext.invalid("no host name to verify the server's certificate against: give a server name")
        }
        let parameters = SSL_get0_param(ssl)
        X509_VERIFY_PARAM_set_hostflags(parameters, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
        let accepted = isAddress ? X509_VERIFY_PARAM_set1_ip_asc(parameters, serverName)
                                 : X509_VERIFY_PARAM_set1_host(parameters, serverName, 0)
        guard accepted == 1 else {
            throw TLSContext.invalid("the server name \"\(serverName)\" cannot be verified: \(OpenSSLErrors.drain())")
        }
        portrunloop_tls_set_verify(ssl, SSL_VERIFY_PEER, 0)
    }

    private func setUpServer(_ ssl: OpaquePointer) {
        SSL_set_accept_state(ssl)
        let configuration = context.configuration
        let acceptAny: Int32 = configuration.verifiesPeer ? 0 : 1
        switch configuration.clientCertificates {
        case .notRequested:
            portrunloop_tls_set_verify(ssl, SSL_VERIFY_NONE, 0)
        case .requested:
            portrunloop_tls_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_CLIENT_ONCE, acceptAny)
        case .required:
            portrunloop_tls_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_CLIENT_ONCE | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, acceptAny)
        }
    }

    /// Whether `name` is an IPv4 or IPv6 address rather than a host name.
    static func isNumericAddress(_ name: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, name, &v4) == 1 || inet_pton(AF_INET6, name, &v6) == 1
    }

    // MARK: StreamTransport

    func start(fileDescriptor: Int32) -> StreamTransportIO {
        guard let ssl, !failed else { return .failed(.tls(TLSFailure(.handshakeFailed, reason: "the transport is closed"))) }
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        guard result == 1 else { return failure(of: result, in: .handshake) }
        details = Self.details(of: ssl)
        return .done(0)
    }

    func read(fileDescriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) -> StreamTransportIO {
        guard let ssl, !failed else { return .end }
        ERR_clear_error()
        var count = 0
        let result = SSL_read_ex(ssl, buffer.baseAddress, buffer.count, &count)
        return result == 1 ? .done(count) : failure(of: result, in: .read)
    }

    func write(fileDescriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> StreamTransportIO {
        guard let ssl, !failed else { return .failed(.tls(TLSFailure(.protocolError, reason: "the transport is closed"))) }
        ERR_clear_error()
        var count = 0
        let result = SSL_write_ex(ssl, bytes.baseAddress, bytes.count, &count)
        return result == 1 ? .done(count) : failure(of: result, in: .write)
    }

    /// Sends `close_notify` (`SSL_shutdown`, retried on the next readiness when it did not fit),
    /// then shuts the socket's output down.
    func shutdownOutput(fileDescriptor: Int32) -> StreamTransportIO {
        if let ssl, !failed, !sentCloseNotify, details != nil {
            ERR_clear_error()
            let result = SSL_shutdown(ssl)
            // 0: ours is sent, the peer's not yet read (reading goes on); 1: both.
            guard result >= 0 else { return failure(of: result, in: .shutdown) }
            sentCloseNotify = true
        }
        guard Glibc.shutdown(fileDescriptor, Int32(SHUT_WR)) == 0 else {
            let code = errno
            return code == ENOTCONN ? .failed(.peerReset) : .failed(.system(call: "shutdown", errno: code))
        }
        return .done(0)
    }

    /// True while OpenSSL holds decrypted bytes of a record not yet returned (`SSL_pending`): no
    /// readiness announces them.
    var hasBufferedInput: Bool {
        guard let ssl else { return false }
        return SSL_pending(ssl) > 0
    }

    func close() {
        guard let ssl else { return }
        self.ssl = nil
        SSL_free(ssl) // frees the BIO; the connection closes the descriptor
        ERR_clear_error()
    }
}
