#if canImport(Glibc)
import Glibc
#endif
import PeerSupport
import PortRunLoopKit
import PortRunLoopTLS

/// Ours over TLS: a ``StreamListener`` made with `StreamListener(tlsOn:context:loop:...)` on
/// 127.0.0.1, on one ``RunLoopThread``, whose connections echo with `connection.onRead = {
/// $0.write($1) }` once their handshake completed. TLS 1.3 only (the context's minimum version),
/// the certificate of ``TLSBenchCertificate``.
///
/// Thread-safety: `Sendable`; ``shutDown()`` from the driving thread; the connections live on the
/// loop's thread.
public final class TLSEchoServer: EchoServer, @unchecked Sendable {
    /// The listening port on 127.0.0.1.
    ///
    /// Thread-safety: immutable.
    public let port: Int
    /// The loop thread's CPU-time clock.
    ///
    /// Thread-safety: immutable.
    public let serverThreadClocks: [clockid_t]
    private let thread: RunLoopThread
    private let listener: StreamListener

    /// Makes the context, starts the loop thread and listens (backlog 4096, as the C server).
    ///
    /// Thread-safety: any thread.
    public init(certificate: TLSBenchCertificate) throws {
        var configuration = TLSConfiguration.server(certificateChain: .file(path: certificate.certificatePath),
                                                    privateKey: .file(path: certificate.keyPath))
        configuration.minimumVersion = .v1_3
        let context = try TLSContext(configuration)
        thread = try RunLoopThread(name: "bench.tls")
        do {
            serverThreadClocks = [try thread.loop.performAndWait { ProcessCounters.currentThreadCPUClock() }]
            var options = StreamListener.Options()
            options.backlog = 4096
            listener = try StreamListener(tlsOn: .host("127.0.0.1", port: 0), context: context, loop: thread.loop,
                                          options: options) { connection in
                connection.onRead = { $0.write($1) }
            }
        } catch {
            thread.stop()
            throw error
        }
        port = listener.localEndpoint.port ?? 0
    }

    /// Connections the listener accepted.
    ///
    /// Thread-safety: any thread.
    public var acceptedConnections: Int? { listener.statistics.accepted }

    /// Closes the listener and ends the loop thread, which closes the connections still open.
    ///
    /// Thread-safety: the driving thread, once, after the clients closed.
    public func shutDown() {
        listener.close()
        thread.stop()
    }
}
