import Foundation
import PortRunLoopKit
import PortRunLoopRedis
import Testing
import PortRunLoopTestSupport

/// The connection handshake: `AUTH` with the endpoint's credentials (a `requirepass` server, an
/// ACL user), or `PING` without them. A refused password, a missing one and a server that does
/// not answer fail the center at once with the server's reason, rather than its first post; a
/// reconnection authenticates again; the password never shows in the endpoint's description.
@Suite(.timeLimit(.minutes(1))) struct RedisAuthenticationTests {
    static let password = "s3cret-for-tests"

    static func endpoint(_ port: Int, username: String? = nil, password: String?) -> RedisEndpoint {
        var endpoint = RedisReconnectionTests.endpoint(port)
        endpoint.commandTimeout = .milliseconds(500)
        endpoint.username = username
        endpoint.password = password
        return endpoint
    }

    static func expectConnectionFailure(_ endpoint: RedisEndpoint, containing text: String,
                                        sourceLocation: SourceLocation = #_sourceLocation) throws {
        let thread = try RunLoopThread(name: "redis-auth")
        defer { thread.stop() }
        #expect(sourceLocation: sourceLocation) {
            _ = try BusNotificationCenter(redis: endpoint, loop: thread.loop, callTimeout: .seconds(2))
        } throws: { error in
            guard case BusNotificationError.connectionFailed(let why) = error else { return false }
            return why.contains(text)
        }
    }

    @Test func aPasswordProtectedServerIsUsedWithItsPasswordAndAgainAfterARestart() throws {
        let server = try RedisServer(extraArguments: ["--requirepass", Self.password])
        let fixture = try RedisFixture(server: server, endpoint: Self.endpoint(server.port, password: Self.password))
        defer { fixture.shutDown() }
        let center = fixture.center
        let seen = Collector<Int>()
        let observation = try center.addObserver(forName: .init("authenticated"), on: fixture.thread.loop) { note in
            seen.append(note.userInfo?["n"] as? Int ?? -1)
        }
        defer { observation.remove() }
        try center.post(name: .init("authenticated"), userInfo: ["n": 1])
        #expect(seen.wait { $0 == [1] })

        let states = Collector<RedisConnectionState>()
        let stateObservation = center.addRedisStateObserver(on: fixture.thread.loop) { states.append($0) }
        defer { stateObservation?.remove() }
        server.kill()
        #expect(states.wait { $0.contains(where: \.isDisconnected) })
        try server.restart()
        #expect(states.wait { $0.last == .connected })
        try center.post(name: .init("authenticated"), userInfo: ["n": 2])
        #expect(seen.wait { $0 == [1, 2] }, "the subscription was restored on an authenticated connection")
        #expect(center.redisMetrics?.reconnections == 1)
    }

    @Test func aWrongPasswordFailsTheCenterWithTheServersReason() throws {
        let server = try RedisServer(extraArguments: ["--requirepass", Self.password])
        try Self.expectConnectionFailure(Self.endpoint(server.port, password: "not-it"), containing: "WRONGPASS")
    }

    @Test func noPasswordForAServerThatWantsOneFailsTheCenterWithTheServersReason() throws {
        let server = try RedisServer(extraArguments: ["--requirepass", Self.password])
        try Self.expectConnectionFailure(Self.endpoint(server.port, password: nil), containing: "NOAUTH")
    }

    @Test func anACLUserAuthenticatesWithItsNameAndAnotherUserIsRefused() throws {
        let server = try RedisServer()
        try server.addUser("notifier", password: "notifier-pw", channels: ["portrunloop.notification.*", "portrunloop.health.*"])
        let fixture = try RedisFixture(server: server, endpoint: Self.endpoint(server.port, username: "notifier", password: "notifier-pw"))
        defer { fixture.shutDown() }
        let seen = Collector<String>()
        let observation = try fixture.center.addObserver(forName: .init("acl"), on: fixture.thread.loop) { seen.append($0.name.rawValue) }
        defer { observation.remove() }
        let everyName = Collector<String>()
        let everyNameObservation = try fixture.center.addObserver(forName: nil, on: fixture.thread.loop) { everyName.append($0.name.rawValue) }
        defer { everyNameObservation.remove() }
        try fixture.center.post(name: .init("acl"))
        #expect(seen.wait { $0 == ["acl"] })
        #expect(everyName.wait { $0 == ["acl"] })
        try fixture.center.flushRedisPosts()
        #expect(fixture.center.redisMetrics?.publishErrors == 0)
        let clients = try server.cli(["CLIENT", "LIST"])
        #expect(clients.output.components(separatedBy: "user=notifier").count - 1 == 2, "both connections: \(clients.output)")

        try Self.expectConnectionFailure(Self.endpoint(server.port, username: "nobody", password: "notifier-pw"), containing: "WRONGPASS")
    }

    /// Something listens on the port but never answers (the kernel accepts the TCP connection
    /// into the listener's backlog): the handshake's command timeout fails the center.
    @Test func aListenerThatNeverAnswersFailsTheCenterRatherThanSeemingConnected() throws {
        let port = try freeLoopbackPort()
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(bound == 0 && listen(listener, 8) == 0)
        try Self.expectConnectionFailure(Self.endpoint(port, password: nil), containing: "no reply within")
    }

    @Test func theDescriptionNamesTheUserButNeverThePassword() {
        let endpoint = RedisEndpoint(host: "10.0.0.7", port: 6380, username: "notifier", password: "hunter2")
        #expect(endpoint.description == "redis://notifier@10.0.0.7:6380")
        #expect(!String(reflecting: endpoint).contains("hunter2"))
        var dumped = ""
        dump(endpoint, to: &dumped)
        #expect(!dumped.contains("hunter2") && dumped.contains("notifier"), "\(dumped)")
    }

    @Test func aUsernameWithoutAPasswordIsAPreconditionFailure() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RedisEndpoint(username: "notifier")
        }
        expectMessage(result, contains: "a username needs a password")
    }
}
