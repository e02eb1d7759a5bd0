#if canImport(Glibc)
import Glibc
#endif
import CBenchTLS

/// The C floor of the TLS echo scenarios: a TLS echo server written directly on OpenSSL, one
/// thread with a level-triggered epoll loop (`Sources/CBenchTLS/cbench_tls_server.c`), its
/// context set up as PortRunLoopTLS sets up a server's, TLS 1.3 only, the certificate of
/// ``TLSBenchCertificate``.
///
/// Thread-safety: `Sendable`; ``shutDown()`` once, from the driving thread.
public final class OpenSSLEchoServer: EchoServer, @unchecked Sendable {
    private let server: OpaquePointer

    /// The listening port on 127.0.0.1.
    ///
    /// Thread-safety: immutable.
    public let port: Int
    /// The server thread's CPU-time clock.
    ///
    /// Thread-safety: immutable.
    public let serverThreadClocks: [clockid_t]

    /// Loads the certificate, listens and starts the server's thread.
    ///
    /// Thread-safety: any thread.
    public init(certificate: TLSBenchCertificate) throws {
        guard let server = cbench_tls_server_create(certificate.certificatePath, certificate.keyPath) else {
            throw TLSBenchSetupFailure(description: "the C TLS server could not start (see stderr)")
        }
        self.server = server
        port = Int(cbench_tls_server_port(server))
        serverThreadClocks = [clockid_t(cbench_tls_server_cpu_clock(server))]
    }

    /// Stops the server's thread and frees it, closing the connections still open.
    ///
    /// Thread-safety: the driving thread, once, after the clients closed.
    public func shutDown() { cbench_tls_server_destroy(server) }
}
