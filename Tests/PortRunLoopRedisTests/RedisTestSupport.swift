import Foundation
import Logging
import PortRunLoopDaemons
import PortRunLoopKit
import PortRunLoopRedis
import Testing

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

extension RedisServer {
    /// Makes an ACL user with `password`, the given channel patterns, and the commands a center
    /// needs (the rights PortRunLoopRedis.docc/RedisNotifications.md lists, and no more).
    func addUser(_ name: String, password: String, channels: [String],
                 sourceLocation: SourceLocation = #_sourceLocation) throws {
        let created = try cli(["ACL", "SETUSER", name, "on", ">" + password, "resetchannels"] + channels.map { "&" + $0 }
                              + ["-@all", "+publish", "+subscribe", "+psubscribe", "+unsubscribe", "+punsubscribe", "+ping"])
        #expect(created.status == 0 && created.output.contains("OK"), "\(created.output)", sourceLocation: sourceLocation)
    }

    /// ``runCLI(_:password:)`` for a test: a `redis-cli` that did not exit within 20 s is an issue
    /// (and status -1).
    @discardableResult
    func cli(_ arguments: [String], password: String? = nil, tlsCA: String? = nil,
             sourceLocation: SourceLocation = #_sourceLocation) throws -> (status: Int32, output: String) {
        let (status, output) = try runCLI(arguments, password: password, tlsCA: tlsCA)
        guard let status else {
            Issue.record("redis-cli \(arguments) did not exit within 20 s", sourceLocation: sourceLocation)
            return (-1, output)
        }
        return (status, output)
    }
}

extension RedisConnectionState {
    /// Whether this is `.disconnected(_)`, whatever the reason.
    var isDisconnected: Bool {
        if case .disconnected = self { true } else { false }
    }
}
