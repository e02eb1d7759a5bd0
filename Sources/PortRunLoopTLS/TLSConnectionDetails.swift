/// What a TLS connection's handshake settled (`StreamConnection/tlsDetails`).
///
/// Thread-safety: a value type; `Sendable`.
public struct TLSConnectionDetails: Sendable, Hashable {
    /// The protocol version in use.
    ///
    /// Thread-safety: immutable.
    public let protocolVersion: TLSProtocolVersion
    /// The cipher suite in use (OpenSSL's name, e.g. `TLS_AES_256_GCM_SHA384`).
    ///
    /// Thread-safety: immutable.
    public let cipherSuite: String
    /// The application protocol agreed through ALPN, nil when none was.
    ///
    /// Thread-safety: immutable.
    public let alpnProtocol: String?
    /// The subject of the peer's certificate (RFC 2253, e.g. `CN=localhost`), nil when the peer
    /// sent none (a client that was not asked for one).
    ///
    /// Thread-safety: immutable.
    public let peerCertificateSubject: String?
    /// The server name (SNI): the one a client asked for, or the one a server was asked for; nil
    /// when none was sent (a numeric address).
    ///
    /// Thread-safety: immutable.
    public let serverName: String?
}
