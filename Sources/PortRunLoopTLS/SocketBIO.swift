internal import COpenSSL

/// The BIO every TLS connection reads and writes its socket through (`COpenSSL/shim.h`): `recv`
/// and `send(MSG_NOSIGNAL | MSG_DONTWAIT)`, so that a write to a reset peer fails with `EPIPE`
/// instead of raising SIGPIPE, with no process-wide signal setting changed.
///
/// Thread-safety: a stateless namespace; its method table is made once (a lazy global) and only
/// read after.
enum SocketBIO {
    /// The method table, made on first use and kept for the process's life. Unchecked: OpenSSL
    /// only reads a method table once it is made.
    nonisolated(unsafe) private static let method: OpaquePointer? = portrunloop_tls_bio_method_new()

    /// A BIO over `fileDescriptor` (which it never closes), or nil.
    static func make(fileDescriptor: Int32) -> OpaquePointer? {
        guard let method else { return nil }
        return portrunloop_tls_bio_new(method, fileDescriptor)
    }
}
