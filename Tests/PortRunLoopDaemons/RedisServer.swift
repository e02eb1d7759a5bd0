import Foundation
import PortRunLoopRedis

/// Paths of the Redis tools (installed by Scripts/install-deps.sh).
///
/// Thread-safety: constants.
public enum RedisTools {
    /// `redis-server`.
    public static let server = "/usr/bin/redis-server"
    /// `redis-cli`.
    public static let cli = "/usr/bin/redis-cli"
}

/// A private `redis-server` on 127.0.0.1 and a random free port, persisting nothing: started by
/// `init` (which waits, at most 10 s, for "Ready to accept connections"), killed by ``kill()`` (as a
/// crash), started again on the same port by ``restart()``, and stopped by ``stop()`` or release.
/// Never the system's server: never port 6379 unless the kernel chose it.
///
/// Thread-safety: `Sendable`; every member may be called from any thread.
public final class RedisServer: @unchecked Sendable {
    /// The server's port on 127.0.0.1.
    public let port: Int
    /// Further `redis-server` options (e.g. `--requirepass`), kept for ``restart()``.
    public let extraArguments: [String]
    /// The command the server is started through (see ``StreamingProcess``), kept for ``restart()``.
    public let launcher: [String]
    /// The server's certificate and key when it speaks only TLS on ``port`` (no plain port).
    public let tls: (certificate: String, key: String)?
    private let lock = NSLock()
    private var current: StreamingProcess? // guarded by `lock`

    /// Starts a server on a free loopback port; with `tls`, a server that speaks only TLS there
    /// (`--tls-port`, with `--port 0`), with that certificate and key, not asking clients for one.
    public init(extraArguments: [String] = [], launcher: [String] = [],
                tls: (certificate: String, key: String)? = nil) throws {
        port = try freeLoopbackPort()
        self.extraArguments = extraArguments
        self.launcher = launcher
        self.tls = tls
        try start()
    }

    /// The endpoint for centers on this server.
    public var endpoint: RedisEndpoint { RedisEndpoint(port: port) }

    /// The running server's process id, or nil while it is down.
    public var pid: Int32? { lock.withLock { current?.pid } }

    /// Starts the server (after ``kill()``): throws ``RedisServerError/notReady(_:)`` with its
    /// output when it did not get ready within 10 s (the port taken meanwhile, say).
    public func start() throws {
        let listening = tls.map { tls in
            ["--port", "0", "--tls-port", "\(port)", "--tls-cert-file", tls.certificate, "--tls-key-file", tls.key,
             "--tls-auth-clients", "no"]
        } ?? ["--port", "\(port)"]
        let process = try StreamingProcess(RedisTools.server, listening + [
            "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--daemonize", "no", "--logfile", "", "--protected-mode", "yes",
        ] + extraArguments, launcher: launcher)
        guard process.wait(for: "Ready to accept connections", seconds: 10) else {
            let output = process.output
            process.stop()
            throw RedisServerError.notReady(output)
        }
        lock.withLock { current = process }
    }

    /// Kills the server at once (SIGKILL; a paused one too) and waits for it to exit (at most 5 s;
    /// false if it had not).
    @discardableResult
    public func kill() -> Bool {
        let process = lock.withLock { defer { current = nil }; return current }
        return process?.stop() ?? true
    }

    /// Stops the server process (SIGSTOP): connections stay open, nothing is answered.
    public func pause() {
        if let pid { Foundation.kill(pid, SIGSTOP) }
    }

    /// Lets a paused server go on (SIGCONT).
    public func resume() {
        if let pid { Foundation.kill(pid, SIGCONT) }
    }

    /// Starts a new server on the same port (after ``kill()``).
    public func restart() throws { try start() }

    /// Stops the server (as ``kill()``).
    @discardableResult
    public func stop() -> Bool { kill() }

    deinit { stop() }

    /// Runs `redis-cli -p <port> arguments…` (with `--tls` and `--cacert` when `tlsCA` is given),
    /// authenticated with `password` when given (through the environment, not the command line);
    /// its status and output, or nil as the status when it did not exit within 20 s (it is then
    /// killed).
    public func runCLI(_ arguments: [String], password: String? = nil, tlsCA: String? = nil) throws -> (status: Int32?, output: String) {
        let tlsArguments = tlsCA.map { ["--tls", "--cacert", $0] } ?? []
        let process = try StreamingProcess(RedisTools.cli, ["-h", "127.0.0.1", "-p", "\(port)"] + tlsArguments + arguments,
                                           environment: password.map { ["REDISCLI_AUTH": $0] } ?? [:])
        defer { process.stop() }
        let status = process.waitForExit(seconds: 20)
        return (status, process.output)
    }
}

/// Why a private Redis server could not be started.
///
/// Thread-safety: `Sendable`; immutable.
public enum RedisServerError: Error {
    /// No free loopback port could be found.
    case noPort
    /// The server did not get ready; its output.
    case notReady(String)
}
