import Foundation
import PortRunLoopKit
import PortRunLoopRedis
import Testing
import PortRunLoopTestSupport

/// Encrypted links: a center reaches a server that speaks only TLS (`redis-server --tls-port`,
/// no plain port) through a real `stunnel4` client tunnel on loopback, which verifies the server's
/// certificate chain and name; the password and the notifications cross only inside TLS. A server
/// the tunnel cannot verify fails the center at once with a connection error; a restarted server
/// is reached again through the same tunnel (PortRunLoopRedis.docc/RedisNotifications.md,
/// "Encrypted links").
@Suite(.timeLimit(.minutes(1))) struct RedisTLSTunnelTests {
    static let password = "tls-tunnel-s3cret"

    /// A TLS-only server with a password, its certificates, and a tunnel to it that checks `host`
    /// against the chain of `ca` (the right CA unless given).
    static func setUp(checkHost host: String = "localhost", ca: ((TestCertificates) -> String)? = nil)
        throws -> (TestCertificates, RedisServer, StunnelTunnel) {
        let certificates = try TestCertificates()
        let server = try RedisServer(extraArguments: ["--requirepass", password],
                                     tls: (certificates.serverCertificate, certificates.serverKey))
        let tunnel = try StunnelTunnel(toPort: server.port, caFile: ca?(certificates) ?? certificates.caCertificate, checkHost: host)
        return (certificates, server, tunnel)
    }

    static func endpoint(_ tunnel: StunnelTunnel) -> RedisEndpoint {
        var endpoint = RedisReconnectionTests.endpoint(tunnel.port)
        endpoint.password = password
        return endpoint
    }

    @Test func aCenterReachesATLSOnlyServerThroughTheTunnel() throws {
        let (certificates, server, tunnel) = try Self.setUp()
        defer { tunnel.stop() }
        // The server takes no plain connection: the only way in is TLS.
        let plain = try server.cli(["PING"], password: Self.password)
        #expect(!plain.output.contains("PONG"), "\(plain.output)")
        let encrypted = try server.cli(["PING"], password: Self.password, tlsCA: certificates.caCertificate)
        #expect(encrypted.output.contains("PONG"), "\(encrypted.output)")

        let fixture = try RedisFixture(server: server, endpoint: Self.endpoint(tunnel))
        defer { fixture.shutDown() }
        let seen = Collector<Int>()
        let observation = try fixture.center.addObserver(forName: .init("sealed"), on: fixture.thread.loop) { note in
            seen.append(note.userInfo?["n"] as? Int ?? -1)
        }
        defer { observation.remove() }
        for n in 1...100 { try fixture.center.post(name: .init("sealed"), userInfo: ["n": n]) }
        #expect(seen.wait(for: 100))
        #expect(seen.values == Array(1...100))
        // The tunnel checked the server's certificate (chain and name), and both connections (the
        // publisher's, the subscriber's) are TLS (the second may resume the first one's session).
        #expect(tunnel.waitForLog("Certificate accepted at depth=0: CN=localhost"), "\(tunnel.output)")
        #expect(tunnel.waitForLog("TLS connected", count: 2), "\(tunnel.output)")
    }

    @Test(arguments: ["the other CA", "another name"])
    func aServerTheTunnelCannotVerifyFailsTheCenter(refusal: String) throws {
        let (certificates, server, tunnel) = refusal == "the other CA"
            ? try Self.setUp(ca: { $0.otherCACertificate })
            : try Self.setUp(checkHost: "redis.example")
        defer { tunnel.stop(); server.stop(); withExtendedLifetime(certificates) {} }
        let thread = try RunLoopThread(name: "redis-tls-refused")
        defer { thread.stop() }
        #expect {
            _ = try BusNotificationCenter(redis: Self.endpoint(tunnel), loop: thread.loop, callTimeout: .seconds(2))
        } throws: { error in
            guard case BusNotificationError.connectionFailed(let why) = error else { return false }
            return why.contains("127.0.0.1:\(tunnel.port)")
        }
        // stunnel refused the server's certificate, and sent it nothing (not the password).
        #expect(tunnel.waitForLog("certificate verify failed"), "\(tunnel.output)")
        let log = tunnel.output
        #expect(!log.contains("Certificate accepted at depth=0"), "\(log)")
        #expect(!log.contains("Connection closed") || log.contains("0 byte(s) sent to TLS"), "\(log)")
    }

    @Test func aRestartedServerIsReachedAgainThroughTheTunnel() throws {
        let (certificates, server, tunnel) = try Self.setUp()
        defer { tunnel.stop(); withExtendedLifetime(certificates) {} } // the server restarts from its files
        let fixture = try RedisFixture(server: server, endpoint: Self.endpoint(tunnel))
        defer { fixture.shutDown() }
        let center = fixture.center
        let states = Collector<RedisConnectionState>()
        let stateObservation = center.addRedisStateObserver(on: fixture.thread.loop) { states.append($0) }
        defer { stateObservation?.remove() }
        let seen = Collector<Int>()
        let observation = try center.addObserver(forName: .init("again"), on: fixture.thread.loop) { note in
            seen.append(note.userInfo?["n"] as? Int ?? -1)
        }
        defer { observation.remove() }
        try center.post(name: .init("again"), userInfo: ["n": 1])
        #expect(seen.wait(for: 1))

        server.kill()
        #expect(states.wait { $0.contains(where: \.isDisconnected) })
        try server.restart()
        #expect(states.wait { $0.last == .connected })
        try center.post(name: .init("again"), userInfo: ["n": 2])
        #expect(seen.wait(for: 2))
        #expect(seen.values == [1, 2])
    }
}
