import Foundation
import PortRunLoopKit
import PortRunLoopRedis
import Testing
import PortRunLoopTestSupport

/// A subscription the server refuses: the caller gets the server's error, not a bare
/// disconnection.
@Suite(.timeLimit(.minutes(1))) struct RedisSubscriptionRefusalTests {
    /// A subscription the server refuses (an ACL user's channel rights) throws the server's error;
    /// hiredis 0.14 gives the subscribed connection up on it, so the center reconnects, and the
    /// observations it had keep working.
    @Test func aSubscriptionTheServerRefusesThrowsItsErrorAndTheOthersKeepWorking() throws {
        let server = try RedisServer()
        try server.addUser("narrow", password: "narrow-pw", channels: ["portrunloop.notification.allowed", "portrunloop.health.*"])
        let fixture = try RedisFixture(server: server, endpoint: RedisAuthenticationTests.endpoint(server.port, username: "narrow", password: "narrow-pw"))
        defer { fixture.shutDown() }
        let center = fixture.center
        let seen = Collector<Int>()
        let allowed = try center.addObserver(forName: .init("allowed"), on: fixture.thread.loop) { note in
            seen.append(note.userInfo?["n"] as? Int ?? -1)
        }
        defer { allowed.remove() }
        #expect {
            _ = try center.addObserver(forName: .init("forbidden"), on: fixture.thread.loop) { _ in }
        } throws: { error in
            guard case BusNotificationError.busError(let name, let message) = error else { return false }
            return name == "NOPERM" && message.contains("channels")
        }
        #expect(eventually { center.redisState == .connected && (center.redisMetrics?.reconnections ?? 0) == 1 })
        try center.post(name: .init("allowed"), userInfo: ["n": 1])
        #expect(seen.wait { $0 == [1] })
    }
}
