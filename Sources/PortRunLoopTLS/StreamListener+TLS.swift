import Foundation
import PortRunLoopKit

extension StreamListener {
    /// Listens on `endpoint` for TLS connections with `context`: each accepted connection's
    /// handshake runs on the loop that will serve it, and `onConnection` is called once it
    /// completed. A connection whose handshake fails, or outlasts
    /// `StreamConnection/Options/handshakeTimeout` (of `options.connection`), is closed and
    /// counted in `StreamListener/Statistics/dropped`; its error is logged at `.debug`.
    ///
    /// ```swift
    /// let context = try TLSContext(.server(certificateChain: .file(path: "server.pem"),
    ///                                      privateKey: .file(path: "server.key")))
    /// let listener = try StreamListener(tlsOn: .host("0.0.0.0", port: 8443), context: context, loop: loop) { connection in
    ///     connection.onRead = { connection, bytes in connection.write(bytes) }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - endpoint: where to listen, as for a plain listener.
    ///   - context: a context with a certificate chain and its private key.
    ///   - loop: the loop that accepts.
    ///   - options: the listener's options; `options.connection` is what its connections are
    ///     made with (their handshake timeout included).
    ///   - modes: the modes the listener accepts in, and its connections are served in.
    ///   - servingLoops: loops that serve the accepted connections in turn (their handshakes
    ///     included); empty (the default): `loop` serves them.
    ///   - onConnection: runs on the serving loop's thread with each connection whose handshake
    ///     completed.
    /// - Throws: `StreamConnectionError/tls(_:)` with `TLSFailure/Kind/invalidConfiguration`
    ///   for a context without a certificate; otherwise as
    ///   `StreamListener/init(on:loop:options:inModes:distributingTo:onConnection:)`.
    ///
    /// Thread-safety: any thread.
    public convenience init(tlsOn endpoint: SocketEndpoint, context: TLSContext, loop: PortRunLoop,
                            options: Options = Options(), inModes modes: [RunLoop.Mode] = [.common],
                            distributingTo servingLoops: [PortRunLoop] = [],
                            onConnection: @escaping @Sendable (StreamConnection) -> Void) throws(StreamConnectionError) {
        guard context.hasCertificate else {
            throw TLSContext.invalid("a TLS listener needs a context with a certificate chain and its private key")
        }
        let maker: StreamTransportMaker = { fileDescriptor, _ throws(StreamConnectionError) in
            try TLSTransport(context: context, fileDescriptor: fileDescriptor, role: .server)
        }
        try self.init(on: endpoint, loop: loop, options: options, inModes: modes, distributingTo: servingLoops,
                      transport: maker, onConnection: onConnection)
    }
}
