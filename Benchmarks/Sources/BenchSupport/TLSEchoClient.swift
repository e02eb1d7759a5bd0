import CBenchTLS

/// The client of the TLS echo scenarios, the same for every server: OpenSSL in C
/// (`Sources/CBenchTLS/cbench_tls_client.c`), TLS 1.3 with TLS_AES_128_GCM_SHA256 and X25519 only,
/// not verifying the server's certificate, never resuming a session.
///
/// Thread-safety: `Sendable`; used by one driving thread.
public final class TLSEchoClient: @unchecked Sendable {
    private let client: OpaquePointer

    /// A client of the server at 127.0.0.1:`port`.
    ///
    /// Thread-safety: any thread.
    public init(port: Int) throws {
        guard let client = cbench_tls_client_create(Int32(port)) else {
            throw TLSBenchSetupFailure(description: "the TLS client could not be made (see stderr)")
        }
        self.client = client
    }

    /// `threads` threads make handshakes (connect, handshake, `payload` bytes there and back,
    /// close_notify both ways, close) until `count` were started or `cap` passed. Returns the
    /// handshakes completed.
    ///
    /// Thread-safety: the driving thread; blocks until the last one finished.
    public func handshakes(count: Int, cap: Duration, threads: Int, payload: Int) -> Int {
        let (seconds, attoseconds) = cap.components
        let completed = cbench_tls_client_handshakes(client, count, seconds * 1_000_000_000 + attoseconds / 1_000_000_000,
                                                     Int32(threads), Int32(payload))
        precondition(completed >= 0, "TLSEchoClient: a handshake or its echo failed (see stderr)")
        return completed
    }

    /// Opens the connection ``echo(bytes:chunk:window:)`` uses (its handshake done on return).
    ///
    /// Thread-safety: the driving thread, once.
    public func openStream() throws {
        guard cbench_tls_client_open_stream(client) == 0 else {
            throw TLSBenchSetupFailure(description: "the TLS stream could not be opened (see stderr)")
        }
    }

    /// Sends `bytes` on the stream in `chunk`-byte writes and reads them back, at most `window`
    /// bytes in flight.
    ///
    /// Thread-safety: the driving thread; blocks until every byte came back.
    public func echo(bytes: Int, chunk: Int, window: Int) {
        let result = cbench_tls_client_echo(client, Int64(bytes), Int32(chunk), Int32(window))
        precondition(result == 0, "TLSEchoClient: the bulk echo failed (see stderr)")
    }

    /// Closes the stream (close_notify both ways) and frees the client.
    ///
    /// Thread-safety: the driving thread, once.
    public func close() { cbench_tls_client_destroy(client) }
}
