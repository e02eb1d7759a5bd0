import Foundation
import PortRunLoopKit
import PortRunLoopRedis
import Testing
import PortRunLoopTestSupport

/// A durable observer behind its stream (a backlog of full reads) against a real `redis-server`:
/// each full read is followed by the next at once, and what it reads is still delivered once, in
/// order, and acknowledged.
@Suite(.timeLimit(.minutes(1))) struct RedisDurableReadAheadTests {
    @Test func aBackloggedStreamIsReadAheadAndDeliveredOnceInOrder() throws {
        let server = try RedisServer()
        defer { server.stop() }
        var durable = DurableMember.durable(["jobs.queued"])
        durable.readCount = 10
        durable.groupStart = .retainedEntries
        var posterDurable = durable
        posterDurable.consumer = "poster"
        let poster = try DurableMember("durable-poster", endpoint: DurableMember.endpoint(port: server.port, durable: posterDurable))
        defer { poster.shutDown() }
        // The backlog is in the stream before the group exists: the observer starts 500 behind.
        for n in 1...500 { try poster.post("jobs.queued", n) }
        try poster.center.flushRedisPosts()
        let observer = try DurableMember("durable-behind", endpoint: DurableMember.endpoint(port: server.port, durable: durable))
        defer { observer.shutDown() }
        try observer.observe("jobs.queued")
        #expect(observer.seen.wait { $0.count >= 500 })
        #expect(observer.numbers == Array(1...500))
        let metrics = PortRunLoopTestSupport.Locked<RedisTransportMetrics?>(nil)
        #expect(SentinelCluster.poll {
            metrics.withLock { $0 = observer.center.redisMetrics }
            return metrics.withLock { $0?.durableAcknowledged == 500 }
        }, "\(String(describing: metrics.withLock { $0 }))")
        let final = try #require(metrics.withLock { $0 })
        // 50 full reads, each followed at once (the last one's follower comes back empty, and the
        // next read blocks). A read answered while the loop waits in its private mode is drained
        // by a queued block, and not followed: a few may be missing, never more than 50.
        #expect(final.durableReadsAhead >= 45 && final.durableReadsAhead <= 50, "\(final)")
        #expect(final.durableRedeliveriesSkipped == 0 && final.malformed == 0, "\(final)")
        let pending = try server.cli(["XPENDING", "portrunloop.notification.jobs.queued", "service"]).output
        #expect(pending.hasPrefix("0"), "\(pending)")
        // Caught up: a new post is read by a blocking read, and none ahead of it.
        try poster.post("jobs.queued", 501)
        #expect(observer.seen.wait { $0.count >= 501 })
        #expect(observer.numbers.last == 501)
    }
}
