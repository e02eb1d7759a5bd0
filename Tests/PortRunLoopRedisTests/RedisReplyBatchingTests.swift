import Foundation
import PortRunLoopKit
import PortRunLoopRedis
import Testing
import PortRunLoopTestSupport

/// The publishing connection reads the server's `PUBLISH` replies in batches (its socket's receive
/// low-water mark): a reply does not wake the loop on its own, yet every reply is read and counted
/// (with the next read of the subscriber, at the watchdog's tick, and at once for a flush), and the
/// command timeout still tells a silent server from a reply left below the mark.
@Suite(.timeLimit(.minutes(1))) struct RedisReplyBatchingTests {
    /// A round trip through the server (a post, then the notification coming back) wakes the loop
    /// for the notification only: one fd event per round trip, where reading each reply as it comes
    /// made two.
    @Test func aRoundTripHandlesOneFdEventNotTwo() throws {
        let fixture = try RedisFixture()
        defer { fixture.shutDown() }
        let center = fixture.center
        let rounds = 40
        let done = Collector<Int>()
        let observation = try center.addObserver(forName: .init("batching.round"), on: fixture.thread.loop) { note in
            let seq = note.userInfo?["seq"] as? Int ?? -1
            if seq + 1 < rounds {
                try? center.post(name: .init("batching.round"), userInfo: ["seq": seq + 1])
            } else {
                done.append(seq)
            }
        }
        try center.flushRedisPosts() // the subscription and the connections are settled
        let before = fixture.thread.loop.metrics.fdEventsHandled
        try center.post(name: .init("batching.round"), userInfo: ["seq": 0])
        #expect(done.wait(for: 1))
        let handled = fixture.thread.loop.metrics.fdEventsHandled - before
        #expect(handled <= rounds + rounds / 10, "\(handled) fd events for \(rounds) round trips")
        try center.flushRedisPosts()
        #expect(center.redisMetrics?.publishConfirmed == rounds)
        observation.remove()
    }

    /// A flush's `PING` is answered below the mark too: the flush wakes for it at once, long before
    /// the watchdog would have read it.
    @Test func aFlushReturnsWithEveryReplyCounted() throws {
        let server = try RedisServer()
        var endpoint = server.endpoint
        endpoint.commandTimeout = .seconds(60) // the watchdog would read only after 15 s
        let fixture = try RedisFixture(server: server, endpoint: endpoint)
        defer { fixture.shutDown() }
        for n in 0..<3 { try fixture.center.post(name: .init("batching.unobserved"), userInfo: ["n": n]) }
        try fixture.center.flushRedisPosts(timeout: .seconds(5))
        #expect(fixture.center.redisMetrics?.publishConfirmed == 3)
        // A second flush after another post (the mark was raised again after the first one; that
        // replies go back to batches after a flush is what the round-trip test measures).
        try fixture.center.post(name: .init("batching.unobserved"), userInfo: ["n": 3])
        try fixture.center.flushRedisPosts(timeout: .seconds(5))
        #expect(fixture.center.redisMetrics?.publishConfirmed == 4)
    }

    /// Replies nobody reads early are read by the watchdog before it judges: a server that answered
    /// is not taken for one that stopped answering, and its replies are counted.
    @Test func theWatchdogReadsRepliesLeftBelowTheMarkInsteadOfDroppingTheConnection() throws {
        let server = try RedisServer()
        var endpoint = server.endpoint
        endpoint.commandTimeout = .milliseconds(200) // a tick every 50 ms; no progress for 200 ms is a loss
        let fixture = try RedisFixture(server: server, endpoint: endpoint)
        defer { fixture.shutDown() }
        try fixture.center.flushRedisPosts()
        for n in 0..<3 { try fixture.center.post(name: .init("batching.unobserved"), userInfo: ["n": n]) }
        // Looked at from the loop after many ticks and well past the command timeout.
        let sampled = Collector<RedisTransportMetrics>()
        let center = fixture.center
        let timer = RunLoopTimer(after: 1.0) { _ in
            if let metrics = center.redisMetrics { sampled.append(metrics) }
        }
        fixture.thread.loop.add(timer, forMode: .common)
        #expect(sampled.wait(for: 1))
        let metrics = try #require(sampled.values.first)
        #expect(metrics.publishConfirmed == 3)
        #expect(metrics.connectionLosses == 0)
        #expect(center.redisState == .connected)
    }
}
