import Foundation
import PortRunLoopKit

extension StreamConnection {
    /// Connects to `endpoint` over TLS with `context`, and calls `completion` on the loop's
    /// thread, once, with the connection after its handshake, or why there is none.
    ///
    /// As `StreamConnection/connect(to:on:timeout:options:inModes:completion:)`, then the
    /// handshake: the whole attempt (resolution, connect, handshake) ends at `timeout`. When the
    /// context verifies its peer, the server's certificate must lead to the context's trust roots
    /// and name `serverName`; a failed check is `StreamConnectionError/tls(_:)` with
    /// `TLSFailure/Kind/untrustedCertificate` or `TLSFailure/Kind/hostnameMismatch`.
    ///
    /// - Parameters:
    ///   - endpoint: the server, as for a plain connect.
    ///   - loop: the loop that owns the connection and runs its handlers.
    ///   - context: the client's context: its trust roots, whether it verifies the server, its
    ///     ALPN protocols, and a certificate to present if it has one.
    ///   - serverName: the name the server's certificate must carry, also sent as the server name
    ///     (SNI) unless it is a numeric address; nil (the default): the endpoint's host. A Unix
    ///     endpoint has none: give one, or use a context that does not verify its peer.
    ///   - timeout: the deadline of the whole attempt, in seconds.
    ///   - options: what the connection is made with.
    ///   - modes: the modes the connection is served in, and in which the connect is watched.
    ///   - completion: runs on the loop's thread; set the connection's handlers there.
    ///
    /// Thread-safety: any thread.
    public static func connectTLS(to endpoint: SocketEndpoint, on loop: PortRunLoop, context: TLSContext,
                                  serverName: String? = nil, timeout: TimeInterval = 30, options: Options = Options(),
                                  inModes modes: [RunLoop.Mode] = [.common],
                                  completion: @escaping @Sendable (Result<StreamConnection, StreamConnectionError>) -> Void) {
        let maker: StreamTransportMaker = { fileDescriptor, hostName throws(StreamConnectionError) in
            try TLSTransport(context: context, fileDescriptor: fileDescriptor, role: .client(serverName: serverName ?? hostName))
        }
        connect(to: endpoint, on: loop, timeout: timeout, options: options, inModes: modes, transport: maker,
                completion: completion)
    }

    /// What the TLS handshake settled (protocol version, cipher suite, ALPN protocol, the peer's
    /// certificate subject, the server name); nil for a connection without TLS. Kept after the
    /// connection closes.
    ///
    /// Thread-safety: the loop's thread (checked).
    public var tlsDetails: TLSConnectionDetails? {
        loop.preconditionOnLoopThread("StreamConnection.tlsDetails")
        return (transport as? TLSTransport)?.details
    }
}
