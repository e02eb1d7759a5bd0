import Foundation
import PortRunLoopKit
import PortRunLoopRedis
import Testing
import PortRunLoopTestSupport

/// Closing a Redis center: posts it kept through an outage and never sent are counted as dropped,
/// and a center whose loop has already shut down still frees its connections (nothing would read
/// the server's answers any more, so it does not wait for them).
@Suite(.timeLimit(.minutes(1))) struct RedisCloseTests {
    /// The number of clients the server has, by `CLIENT LIST` (one line per client, this query's
    /// own included).
    private static func clientCount(_ server: RedisServer) throws -> Int {
        let (status, output) = try server.cli(["CLIENT", "LIST"])
        guard status == 0 else { return -1 }
        return output.split(separator: "\n").filter { $0.contains("addr=") }.count
    }

    @Test func postsKeptThroughAnOutageCountAsDroppedWhenTheCenterCloses() throws {
        let server = try RedisServer()
        let fixture = try RedisFixture(server: server, endpoint: RedisReconnectionTests.endpoint(server.port))
        defer { fixture.shutDown() }
        let center = fixture.center
        let states = Collector<RedisConnectionState>()
        let stateObservation = center.addRedisStateObserver(on: fixture.thread.loop) { states.append($0) }
        defer { stateObservation?.remove() }
        server.kill()
        #expect(states.wait { $0.contains(where: \.isDisconnected) })
        for n in 1...2 { try center.post(name: .init("kept"), userInfo: ["n": n]) }
        let kept = try fixture.thread.loop.performAndWait(timeout: .seconds(5)) { center.redisMetrics?.bufferedWhileDisconnected }
        #expect(kept == 2)
        center.close()
        let metrics = try fixture.thread.loop.performAndWait(timeout: .seconds(5)) { center.redisMetrics }
        #expect(metrics?.bufferedWhileDisconnected == 0)
        #expect(metrics?.droppedWhileDisconnected == 2)
    }

    /// On a running loop, posts handed to the server before `close()` are still written and
    /// answered: the subscriber's end does not take the publishing connection with it.
    @Test func postsHandedOverBeforeCloseAreStillAnswered() throws {
        let server = try RedisServer()
        let fixture = try RedisFixture(server: server, endpoint: RedisReconnectionTests.endpoint(server.port))
        defer { fixture.shutDown() }
        let center = fixture.center
        let seen = Collector<Int>()
        let observation = try center.addObserver(forName: .init("closing.answered"), on: fixture.thread.loop) { _ in seen.append(1) }
        try center.post(name: .init("closing.answered"))
        #expect(seen.wait(for: 1)) // both connections are up
        observation.remove()
        server.pause() // the answers to what follows wait until the server resumes
        for _ in 0..<3 { try center.post(name: .init("closing.answered")) }
        try fixture.thread.loop.performAndWait(timeout: .seconds(5)) { } // handed to hiredis
        center.close()
        try fixture.thread.loop.performAndWait(timeout: .seconds(5)) { } // the subscriber's end is seen
        server.resume()
        #expect(eventually(seconds: 10) { center.redisMetrics?.publishConfirmed == 4 },
                "the three posts made before close() should be answered: \(String(describing: center.redisMetrics))")
        #expect(center.redisMetrics?.unconfirmedAtDisconnect == 0)
    }

    /// A disconnection observer added after `close()` is not called: a close is not a loss.
    @Test func aDisconnectionObserverAddedAfterCloseIsNotCalled() throws {
        let server = try RedisServer()
        let fixture = try RedisFixture(server: server, endpoint: RedisReconnectionTests.endpoint(server.port))
        defer { fixture.shutDown() }
        let center = fixture.center
        center.close()
        let losses = Collector<BusNotificationError>()
        let observation = center.addDisconnectionObserver(on: fixture.thread.loop) { losses.append($0) }
        defer { observation.remove() }
        try fixture.thread.loop.performAndWait(timeout: .seconds(5)) { } // anything queued has run
        try fixture.thread.loop.performAndWait(timeout: .seconds(5)) { }
        #expect(losses.values.isEmpty)
    }

    @Test func closingACenterWhoseLoopHasShutDownFreesItsConnections() throws {
        let server = try RedisServer()
        let fixture = try RedisFixture(server: server, endpoint: RedisReconnectionTests.endpoint(server.port))
        defer { fixture.shutDown() }
        let center = fixture.center
        // A post confirmed: both connections are up (the subscriber with an observation's channel).
        let seen = Collector<Int>()
        let observation = try center.addObserver(forName: .init("closing.dead.loop"), on: fixture.thread.loop) { _ in seen.append(1) }
        try center.post(name: .init("closing.dead.loop"))
        #expect(seen.wait(for: 1))
        observation.remove()
        let before = try Self.clientCount(server)
        #expect(before >= 3, "the center's two connections and the query's own")
        // A PUBLISH the server has not answered (it is stopped), written before the loop shuts down.
        server.pause()
        try center.post(name: .init("closing.dead.loop"))
        try fixture.thread.loop.performAndWait(timeout: .seconds(5)) { }
        fixture.thread.stop()
        center.close() // nothing would read the answer any more: the connections are freed now
        server.resume()
        #expect(eventually(seconds: 10) { (try? Self.clientCount(server)) == before - 2 },
                "the server should see both of the center's connections close")
        #expect(center.redisMetrics?.unconfirmedAtDisconnect == 1)
    }
}
