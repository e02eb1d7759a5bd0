#if canImport(Glibc)
import Glibc
#endif
import CBenchNative

/// The libevent floor for buffered connections: libevent's own `evconnlistener` and a
/// `bufferevent` per connection echoing with `evbuffer_add_buffer` (input moved to output), on one
/// thread (`cbench_bufferevent_echo.c`). Beside ``StreamEchoServer`` it shows what the library's
/// hand-written connections cost against the buffered layer libevent ships.
///
/// Thread-safety: `Sendable`; ``shutDown()`` from the driving thread.
public final class BuffereventEchoServer: EchoServer, @unchecked Sendable {
    /// The listening port on 127.0.0.1.
    ///
    /// Thread-safety: immutable.
    public let port: Int
    /// The server thread's CPU-time clock.
    ///
    /// Thread-safety: immutable.
    public let serverThreadClocks: [clockid_t]
    private let server: OpaquePointer

    /// Starts the server thread (backlog 4096, as the other peers).
    ///
    /// Thread-safety: any thread.
    public init() throws {
        guard let server = cbench_bufferevent_echo_start(4096) else { throw BuffereventSetupFailure() }
        self.server = server
        port = Int(cbench_bufferevent_echo_port(server))
        let clock = cbench_bufferevent_echo_cpu_clock(server)
        serverThreadClocks = clock == -1 ? [] : [clockid_t(clock)]
    }

    /// Connections accepted so far.
    ///
    /// Thread-safety: any thread.
    public var acceptedConnections: Int? { Int(cbench_bufferevent_echo_accepted(server)) }

    /// Stops the thread and frees the server.
    ///
    /// Thread-safety: the driving thread, once, after the clients closed.
    public func shutDown() { cbench_bufferevent_echo_stop(server) }
}

/// The C bufferevent server could not start (no base, no listener, no thread).
///
/// Thread-safety: a value type.
struct BuffereventSetupFailure: Error, CustomStringConvertible {
    var description: String { "the libevent bufferevent echo server could not start" }
}
