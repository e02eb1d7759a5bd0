import CBenchNative
import Foundation
import PeerSupport
#if canImport(Glibc)
import Glibc
#endif

/// A private `redis-server` on 127.0.0.1 and a port that was free a moment ago, persisting
/// nothing, for the Redis rows; stopped with ``stop()``. Never the system's server.
///
/// Thread-safety: one driving thread.
public final class PrivateRedis: @unchecked Sendable {
    /// The server's port on 127.0.0.1.
    ///
    /// Thread-safety: immutable.
    public let port: Int
    private let server: PeerProcess

    /// Starts the server and waits (at most 10 s) until it accepts connections.
    ///
    /// Thread-safety: any thread.
    public init() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/redis-server") else {
            throw CrossProcessFailure("redis-server is missing: Scripts/install-deps.sh redis-server libhiredis-dev")
        }
        var chosen: Int32 = 0
        let probe = cbench_tcp_listen_loopback(1, &chosen)
        guard probe >= 0 else { throw CrossProcessFailure("no free loopback port (errno \(errno))") }
        close(probe)
        port = Int(chosen)
        server = try PeerProcess(executable: "/usr/bin/redis-server", arguments: [
            "--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--daemonize", "no", "--logfile", "", "--protected-mode", "yes",
        ])
        while true {
            let line = try server.readLine(timeout: .seconds(10))
            if line.contains("Ready to accept connections") { break }
        }
    }

    /// Stops the server.
    ///
    /// Thread-safety: the driving thread, once.
    public func stop() { server.stop() }
}
