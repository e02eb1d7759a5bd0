#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import PortRunLoopKit
import PortRunLoopRedis
import Testing
import PortRunLoopTestSupport

/// A connection whose socket the loop cannot watch is dropped with its reason, never left
/// unserviced: without a source on the loop nothing would read its replies or write its commands.
@Suite(.timeLimit(.minutes(1))) struct RedisUnwatchableSocketTests {
    @Test func aSocketTheLoopCannotWatchFailsTheConnection() throws {
        let server = try RedisServer()
        defer { server.stop() }
        // `watch` asks this epoll instance whether epoll takes an fd; on the center's loop thread
        // (where hiredis adds its socket's events) the answer is no.
        let probe = try #require(System.probeEpoll())
        let thread = try onRefusingThread(.epollAdd(epoll: probe, errno: EPERM)) { try RunLoopThread(name: "redis-refused") }
        defer { thread.stop() }
        let recorder = LogRecorder()
        let started = ContinuousClock.now
        #expect {
            _ = try BusNotificationCenter(redis: RedisReconnectionTests.endpoint(server.port), loop: thread.loop,
                                          logger: recorder.logger, callTimeout: .seconds(2))
        } throws: { error in
            guard case BusNotificationError.connectionFailed(let why) = error else { return false }
            return why.contains("127.0.0.1:\(server.port)") && why.contains("could not be watched")
        }
        #expect(ContinuousClock.now - started < .seconds(2)) // at once, not at the call's timeout
        let warnings = recorder.entries.filter { $0.level == .warning && $0.message.contains("could not be watched") }
        #expect(!warnings.isEmpty)
        #expect(warnings.allSatisfy { $0["portrunloop.error"]?.contains("epoll refuses it") == true && $0["portrunloop.fd"] != nil })
    }
}
