import Foundation
import PortRunLoopKit
import PortRunLoopRedis
import Logging
import Testing
import PortRunLoopTestSupport

/// Paths of the Redis tools (installed by Scripts/install-deps.sh).
enum RedisTools {
    static let server = "/usr/bin/redis-server"
    static let cli = "/usr/bin/redis-cli"
}

/// A port on 127.0.0.1 that was free a moment ago (bound to port 0, read back, closed).
func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw RedisServerError.noPort }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw RedisServerError.noPort }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else { throw RedisServerError.noPort }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// A private `redis-server` for one test, on 127.0.0.1 and a random free port, persisting nothing:
/// started by `init` (which waits, at most 10 s, for "Ready to accept connections"), killed by
/// ``kill()`` (as a crash), started again on the same port by ``restart()``, and stopped by
/// ``stop()`` or release. Never the system's server: never port 6379 unless the kernel chose it.
final class RedisServer: @unchecked Sendable {
    let port: Int
    /// Further `redis-server` options (e.g. `--requirepass`), kept for ``restart()``.
    let extraArguments: [String]
    private let current = PortRunLoopTestSupport.Locked<StreamingProcess?>(nil)

    init(extraArguments: [String] = []) throws {
        port = try freeLoopbackPort()
        self.extraArguments = extraArguments
        try start()
    }

    var endpoint: RedisEndpoint { RedisEndpoint(port: port) }

    func start() throws {
        let process = try StreamingProcess(RedisTools.server, [
            "--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--daemonize", "no", "--logfile", "", "--protected-mode", "yes",
        ] + extraArguments)
        guard process.wait(for: "Ready to accept connections", seconds: 10) else {
            let output = process.output
            process.stop()
            throw RedisServerError.notReady(output)
        }
        current.withLock { $0 = process }
    }

    /// Kills the server at once (SIGKILL; a paused one too) and waits for it to exit.
    func kill() {
        let process = current.withLock { state in defer { state = nil }; return state }
        process?.stop()
    }

    /// Stops the server process (SIGSTOP): connections stay open, nothing is answered.
    func pause() {
        if let pid = current.withLock({ $0?.pid }) { Foundation.kill(pid, SIGSTOP) }
    }

    /// Lets a paused server go on (SIGCONT).
    func resume() {
        if let pid = current.withLock({ $0?.pid }) { Foundation.kill(pid, SIGCONT) }
    }

    /// Starts a new server on the same port (after ``kill()``).
    func restart() throws { try start() }

    func stop() { kill() }

    deinit { stop() }

    /// Makes an ACL user with `password`, the given channel patterns, and the commands a center
    /// needs (the rights PortRunLoopRedis.docc/RedisNotifications.md lists, and no more).
    func addUser(_ name: String, password: String, channels: [String],
                 sourceLocation: SourceLocation = #_sourceLocation) throws {
        let created = try cli(["ACL", "SETUSER", name, "on", ">" + password, "resetchannels"] + channels.map { "&" + $0 }
                              + ["-@all", "+publish", "+subscribe", "+psubscribe", "+unsubscribe", "+punsubscribe", "+ping"])
        #expect(created.status == 0 && created.output.contains("OK"), "\(created.output)", sourceLocation: sourceLocation)
    }

    /// Runs `redis-cli -p <port> arguments…` (bounded), authenticated with `password` when given
    /// (through the environment, not the command line); its status and output.
    @discardableResult
    func cli(_ arguments: [String], password: String? = nil) throws -> (status: Int32, output: String) {
        let process = try StreamingProcess(RedisTools.cli, ["-h", "127.0.0.1", "-p", "\(port)"] + arguments,
                                           environment: password.map { ["REDISCLI_AUTH": $0] } ?? [:])
        defer { process.stop() }
        guard let status = process.waitForExit(seconds: 20) else {
            Issue.record("redis-cli \(arguments) did not exit within 20 s")
            return (-1, process.output)
        }
        return (status, process.output)
    }
}

enum RedisServerError: Error {
    case noPort
    case notReady(String)
}

/// A Redis center on its own loop thread; closed and the thread stopped by ``shutDown()``.
final class RedisFixture: @unchecked Sendable {
    let server: RedisServer
    let thread: RunLoopThread
    let center: BusNotificationCenter

    init(server: RedisServer? = nil, endpoint: RedisEndpoint? = nil, name: String = "redis-center") throws {
        self.server = try server ?? RedisServer()
        thread = try RunLoopThread(name: name)
        var logger = Logger(label: "redis-test", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = ProcessInfo.processInfo.environment["REDIS_TEST_DEBUG"] != nil ? .debug : .critical
        center = try BusNotificationCenter(redis: endpoint ?? self.server.endpoint, loop: thread.loop, logger: logger, callTimeout: .seconds(5))
    }

    func shutDown() {
        center.close()
        thread.stop()
        server.stop()
    }
}

extension RedisConnectionState {
    /// Whether this is `.disconnected(_)`, whatever the reason.
    var isDisconnected: Bool {
        if case .disconnected = self { true } else { false }
    }
}
