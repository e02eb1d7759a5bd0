import Foundation
import PortRunLoopKit
@testable import PortRunLoopRedis
import Testing
import PortRunLoopTestSupport

/// A Redis center's state observations: the current state at once, then each change, never an
/// older one after a newer; releasing the token ends the observation as `remove()` does.
@Suite(.timeLimit(.minutes(1))) struct RedisStateObservationTests {
    @Test func releasingTheTokenEndsTheObservation() throws {
        let server = try RedisServer()
        let fixture = try RedisFixture(server: server, endpoint: RedisReconnectionTests.endpoint(server.port))
        defer { fixture.shutDown() }
        let center = fixture.center
        let released = Collector<RedisConnectionState>()
        let kept = Collector<RedisConnectionState>()
        var token = center.addRedisStateObserver(on: fixture.thread.loop) { released.append($0) }
        #expect(token != nil)
        let keptToken = center.addRedisStateObserver(on: fixture.thread.loop) { kept.append($0) }
        defer { keptToken?.remove() }
        #expect(released.wait(for: 1)) // the current state
        #expect(kept.wait(for: 1))
        token = nil
        server.kill()
        #expect(kept.wait { $0.contains(where: \.isDisconnected) })
        try fixture.thread.loop.performAndWait(timeout: .seconds(5)) { } // whatever was queued has run
        #expect(released.values.count == 1, "a released token's handler ran again: \(released.values)")
    }

    /// Two changes made at once on two threads can be queued in either order: the one queued
    /// last but older is skipped, so the handler ends on the newer.
    @Test func anOlderStateQueuedAfterANewerOneIsSkipped() throws {
        let server = try RedisServer()
        let fixture = try RedisFixture(server: server, endpoint: RedisReconnectionTests.endpoint(server.port))
        defer { fixture.shutDown() }
        let seen = Collector<RedisConnectionState>()
        let token = try #require(fixture.center.addRedisStateObserver(on: fixture.thread.loop) { seen.append($0) })
        defer { token.remove() }
        #expect(seen.wait { $0 == [.connected] })
        token.deliver(.closed, version: 1_000)
        token.deliver(.disconnected("older"), version: 999)
        try fixture.thread.loop.performAndWait(timeout: .seconds(5)) {} // both queued before this
        #expect(seen.values == [.connected, .closed])
    }
}
