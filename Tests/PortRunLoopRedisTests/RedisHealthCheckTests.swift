import Foundation
import PortRunLoopKit
import PortRunLoopRedis
import Testing
import PortRunLoopTestSupport

/// Health checks: a connection that has heard nothing from the server for the endpoint's
/// interval asks it for an answer, so a silent dead link is a loss (and a reconnection) even when
/// the center only observes, and a quiet center is not closed by the server's idle-client timeout.
@Suite(.timeLimit(.minutes(1))) struct RedisHealthCheckTests {
    static func endpoint(_ port: Int, healthCheckInterval: Duration?) -> RedisEndpoint {
        var endpoint = RedisReconnectionTests.endpoint(port)
        endpoint.commandTimeout = .milliseconds(500)
        endpoint.healthCheckInterval = healthCheckInterval
        return endpoint
    }

    /// The server stops answering while the center has nothing to send: only a health check can
    /// find out.
    @Test func aServerThatFallsSilentIsALossWhenTheHealthCheckGoesUnanswered() throws {
        let server = try RedisServer()
        let fixture = try RedisFixture(server: server, endpoint: Self.endpoint(server.port, healthCheckInterval: .milliseconds(100)))
        defer { fixture.shutDown() }
        let center = fixture.center
        let states = Collector<RedisConnectionState>()
        let stateObservation = center.addRedisStateObserver(on: fixture.thread.loop) { states.append($0) }
        let seen = Collector<Int>()
        let observation = try center.addObserver(forName: .init("silent"), on: fixture.thread.loop) { note in
            seen.append(note.userInfo?["n"] as? Int ?? -1)
        }
        server.pause()
        defer { server.resume() }
        #expect(states.wait { $0.contains { if case .disconnected(let why) = $0 { why.contains("health check") } else { false } } },
                "\(states.values)")
        server.resume()
        #expect(states.wait { $0.last == .connected && $0.count >= 3 }, "\(states.values)")
        try center.post(name: .init("silent"), userInfo: ["n": 1])
        #expect(seen.wait { $0 == [1] }, "the subscription was restored")
        let metrics = try #require(center.redisMetrics)
        #expect(metrics.connectionLosses == 1)
        #expect(metrics.healthChecks >= 1)
        #expect(metrics.unconfirmedAtDisconnect == 0, "a health check is not a post")
        observation.remove(); stateObservation?.remove()
    }

    /// The server closes clients idle for a second (`CONFIG SET timeout 1`); health checks every
    /// 100 ms keep both connections in use, and the center keeps working after many of them.
    @Test func healthChecksKeepAQuietCenterConnectedThroughTheServersIdleTimeout() throws {
        let server = try RedisServer()
        let configured = try server.cli(["CONFIG", "SET", "timeout", "1"])
        #expect(configured.status == 0, "\(configured.output)")
        let fixture = try RedisFixture(server: server, endpoint: Self.endpoint(server.port, healthCheckInterval: .milliseconds(100)))
        defer { fixture.shutDown() }
        let center = fixture.center
        // Over 3 s (a check every ~125 ms on each connection): three times the server's timeout.
        #expect(eventually(seconds: 20) { (center.redisMetrics?.healthChecks ?? 0) >= 50 })
        let quiet = try #require(center.redisMetrics)
        #expect(quiet.connectionLosses == 0 && quiet.failedAttempts == 0, "\(quiet)")
        #expect(center.redisState == .connected)

        // The subscribed connection's check (a subscription to its own channel) leaves observing
        // every name as it was: nothing is published on that channel, and it is not counted.
        let seen = Collector<String>()
        let observation = try center.addObserver(forName: nil, on: fixture.thread.loop) { note in seen.append(note.name.rawValue) }
        defer { observation.remove() }
        try center.post(name: .init("after.checks"))
        #expect(seen.wait { $0 == ["after.checks"] })
        let metrics = try #require(center.redisMetrics)
        #expect(metrics.subscriptionsConfirmed == 1)
        #expect(metrics.publishErrors == 0 && metrics.malformed == 0, "\(metrics)")
    }

    /// Without health checks, the same server closes the quiet center's connections: what the
    /// test above guards against happens.
    @Test func withoutHealthChecksAQuietCenterIsClosedByTheServersIdleTimeout() throws {
        let server = try RedisServer()
        let configured = try server.cli(["CONFIG", "SET", "timeout", "1"])
        #expect(configured.status == 0, "\(configured.output)")
        let fixture = try RedisFixture(server: server, endpoint: Self.endpoint(server.port, healthCheckInterval: nil))
        defer { fixture.shutDown() }
        let center = fixture.center
        #expect(eventually(seconds: 20) { (center.redisMetrics?.connectionLosses ?? 0) >= 1 })
        #expect(center.redisMetrics?.healthChecks == 0)
    }

    @Test func aHealthCheckIntervalThatIsNotPositiveIsAPreconditionFailure() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RedisEndpoint(healthCheckInterval: .zero)
        }
        expectMessage(result, contains: "healthCheckInterval must be positive")
    }

    @Test func aTimeoutSetToZeroLaterIsAPreconditionFailure() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var endpoint = RedisEndpoint()
            endpoint.commandTimeout = .zero
        }
        expectMessage(result, contains: "timeouts must be positive")
    }
}
