/// What a ``TLSContext`` is made from: the certificate and key a side presents, the roots it
/// trusts, whether it verifies its peer, and the application protocols it offers (ALPN).
///
/// A server needs ``certificateChain`` and ``privateKey``; a client usually needs neither, only
/// ``trustRoots`` (the system's by default):
///
/// ```swift
/// let server = try TLSContext(.server(certificateChain: .file(path: "server.pem"),
///                                     privateKey: .file(path: "server.key")))
/// let client = try TLSContext(.client(trustRoots: .certificates(.file(path: "ca.pem"))))
/// ```
///
/// The protocol is TLS 1.2 or later; renegotiation and compression are off.
///
/// Thread-safety: a value type; `Sendable`.
public struct TLSConfiguration: Sendable, Hashable {
    /// PEM text, given in place or read from a file when the ``TLSContext`` is made.
    ///
    /// Thread-safety: a value type; `Sendable`.
    public enum PEMSource: Sendable, Hashable, CustomStringConvertible {
        /// The PEM text itself (`-----BEGIN CERTIFICATE-----` ...).
        case text(String)
        /// A file holding PEM text.
        case file(path: String)

        /// The file's path, or the text's length only: a configuration that is logged or printed
        /// does not show a private key.
        ///
        /// Thread-safety: a pure function.
        public var description: String {
            switch self {
            case .text(let text): "PEM text (\(text.utf8.count) bytes)"
            case .file(let path): "PEM file \(path)"
            }
        }
    }

    /// The certificates a side trusts as roots of its peer's chain.
    ///
    /// Thread-safety: a value type; `Sendable`.
    public enum TrustRoots: Sendable, Hashable {
        /// The system's roots (OpenSSL's default paths: `/etc/ssl/certs` on Debian).
        case systemDefault
        /// Only these certificates (one or more PEM blocks).
        case certificates(PEMSource)
    }

    /// Whether a server asks its clients for a certificate.
    ///
    /// Thread-safety: a value type; `Sendable`.
    public enum ClientCertificates: Sendable, Hashable {
        /// Not asked for (the default).
        case notRequested
        /// Asked for; a client may send none. One it sends is verified when ``verifiesPeer``.
        case requested
        /// Asked for and required: a client that sends none fails the handshake
        /// (`TLSFailure/Kind/missingCertificate`).
        case required
    }

    /// The certificate this side presents, then its intermediates (PEM). Required of a server.
    /// It is sent exactly as given (OpenSSL's `SSL_MODE_NO_AUTO_CHAIN`): include every
    /// intermediate the peer needs; none is looked up in the trust store.
    ///
    /// Thread-safety: a value type.
    public var certificateChain: PEMSource?
    /// The private key of ``certificateChain``'s first certificate (PEM, not encrypted).
    ///
    /// Thread-safety: a value type.
    public var privateKey: PEMSource?
    /// The roots the peer's certificate chain must lead to.
    ///
    /// Thread-safety: a value type.
    public var trustRoots: TrustRoots
    /// Whether the peer's certificate is verified (default true). A client then requires the
    /// server's chain to lead to ``trustRoots`` and its certificate to name the host connected
    /// to (or the `serverName` given); a server verifies the certificates of
    /// ``clientCertificates``. false: any certificate is accepted (tests, pinning done elsewhere).
    ///
    /// Thread-safety: a value type.
    public var verifiesPeer: Bool
    /// The application protocols offered (a client) or accepted (a server) through ALPN, in order
    /// of preference, e.g. `["h2", "http/1.1"]`. Empty: no ALPN. A server with protocols and a
    /// client offering none of them fails the handshake (`no_application_protocol`).
    ///
    /// Thread-safety: a value type.
    public var alpnProtocols: [String]
    /// The oldest protocol version accepted (default TLS 1.2).
    ///
    /// Thread-safety: a value type.
    public var minimumVersion: TLSProtocolVersion
    /// Whether a server asks for client certificates (ignored by clients).
    ///
    /// Thread-safety: a value type.
    public var clientCertificates: ClientCertificates

    /// A configuration with every field given (the defaults: no certificate, the system's roots,
    /// peers verified, no ALPN, TLS 1.2 or later, no client certificates asked for).
    ///
    /// Thread-safety: a pure function.
    public init(certificateChain: PEMSource? = nil, privateKey: PEMSource? = nil, trustRoots: TrustRoots = .systemDefault,
                verifiesPeer: Bool = true, alpnProtocols: [String] = [], minimumVersion: TLSProtocolVersion = .v1_2,
                clientCertificates: ClientCertificates = .notRequested) {
        self.certificateChain = certificateChain
        self.privateKey = privateKey
        self.trustRoots = trustRoots
        self.verifiesPeer = verifiesPeer
        self.alpnProtocols = alpnProtocols
        self.minimumVersion = minimumVersion
        self.clientCertificates = clientCertificates
    }

    /// A server's configuration: its certificate chain and key, and the protocols it accepts.
    ///
    /// Thread-safety: a pure function.
    public static func server(certificateChain: PEMSource, privateKey: PEMSource,
                              alpnProtocols: [String] = []) -> TLSConfiguration {
        TLSConfiguration(certificateChain: certificateChain, privateKey: privateKey, alpnProtocols: alpnProtocols)
    }

    /// A client's configuration: the roots it trusts (the system's by default), and the protocols
    /// it offers. Servers are verified, their names included.
    ///
    /// Thread-safety: a pure function.
    public static func client(trustRoots: TrustRoots = .systemDefault, alpnProtocols: [String] = []) -> TLSConfiguration {
        TLSConfiguration(trustRoots: trustRoots, alpnProtocols: alpnProtocols)
    }
}
