/// Why a stream connection could not be made, or why it ended other than by a clean close.
///
/// Thread-safety: a value type; `Sendable`.
public enum StreamConnectionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The endpoint cannot be used as given (an empty host, a port outside 0...65535, a socket path
    /// too long).
    case invalidEndpoint(SocketEndpoint, reason: String)
    /// `getaddrinfo` found no address for the host (`gai_strerror`'s text).
    case nameResolutionFailed(String, reason: String)
    /// Nothing listens there (`ECONNREFUSED`).
    case connectionRefused(SocketEndpoint)
    /// The connection was not made before its deadline.
    case timedOut(SocketEndpoint)
    /// The listener's address is taken (`EADDRINUSE`).
    case addressInUse(SocketEndpoint)
    /// The peer reset the connection (`ECONNRESET`, `EPIPE`): bytes still queued were not sent.
    case peerReset
    /// The outbound queue would have grown past ``StreamConnection/Options/outboundLimit``: the peer
    /// reads slower than the connection is written, and the writer did not wait for
    /// ``StreamConnectionEvent/writabilityChanged(_:)``. The connection was closed.
    case outboundLimitExceeded(limit: Int)
    /// The connection's loop shut down.
    case loopShutDown
    /// The connection is closed, or its output was shut down: nothing more can be written to it
    /// (an ``AsyncStreamConnection`` write after a clean close, or one waiting when it closed).
    case closed
    /// The task waiting on the connection was cancelled; the cancellation closed the connection
    /// (``AsyncStreamConnection``).
    case cancelled
    /// The TLS layer failed (handshake, certificate, or a record it could not read).
    case tls(TLSFailure)
    /// A system call failed with this errno.
    case system(call: String, errno: Int32)

    /// The error in words, with the errno's text where there is one.
    ///
    /// Thread-safety: a pure function.
    public var description: String {
        switch self {
        case .invalidEndpoint(let endpoint, let reason): "invalid endpoint \(endpoint): \(reason)"
        case .nameResolutionFailed(let host, let reason): "could not resolve \(host): \(reason)"
        case .connectionRefused(let endpoint): "connection to \(endpoint) refused"
        case .timedOut(let endpoint): "connection to \(endpoint) timed out"
        case .addressInUse(let endpoint): "address \(endpoint) is in use"
        case .peerReset: "the peer reset the connection"
        case .outboundLimitExceeded(let limit): "the outbound queue passed its limit of \(limit) bytes (the peer reads too slowly)"
        case .loopShutDown: "the connection's PortRunLoop shut down"
        case .closed: "the connection is closed for writing"
        case .cancelled: "the task waiting on the connection was cancelled (which closed it)"
        case .tls(let failure): "TLS: \(failure)"
        case .system(let call, let code): "\(call) failed: \(System.Errno(code))"
        }
    }
}

/// What went wrong in a TLS connection, classified so that a program can tell a certificate it
/// must not trust from a peer that went away.
///
/// Thread-safety: a value type; `Sendable`.
public struct TLSFailure: Sendable, Hashable, CustomStringConvertible {
    /// The kinds of TLS failure.
    ///
    /// Thread-safety: a value type; `Sendable`.
    public enum Kind: Sendable, Hashable {
        /// The peer's certificate chain does not lead to a trusted root (unknown CA, self-signed,
        /// expired, not yet valid).
        case untrustedCertificate
        /// The certificate is trusted but not for the name asked for.
        case hostnameMismatch
        /// The peer sent no certificate where one is required.
        case missingCertificate
        /// The handshake failed for another reason (no shared protocol version or cipher, no
        /// common ALPN protocol, an alert from the peer).
        case handshakeFailed
        /// The peer closed the TCP connection without a TLS `close_notify`: what it sent may
        /// have been cut short.
        case uncleanShutdown
        /// A record could not be read or written after the handshake.
        case protocolError
        /// The configuration could not be used (a certificate or key that does not parse, a key
        /// that does not match its certificate).
        case invalidConfiguration
    }

    /// The kind.
    ///
    /// Thread-safety: immutable.
    public let kind: Kind
    /// The TLS library's own words (OpenSSL's error string, or its verification result).
    ///
    /// Thread-safety: immutable.
    public let reason: String

    /// A failure of `kind`, with the TLS library's `reason`.
    ///
    /// Thread-safety: a pure function.
    public init(_ kind: Kind, reason: String) {
        self.kind = kind
        self.reason = reason
    }

    /// The kind and the reason.
    ///
    /// Thread-safety: a pure function.
    public var description: String { "\(kind): \(reason)" }
}
