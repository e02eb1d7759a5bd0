import Foundation
import PortRunLoopKit
import PortRunLoopRedis
import Testing
import PortRunLoopTestSupport

/// Durable notifications through a real Sentinel failover: the master killed (SIGKILL) while one
/// center posts every 2 ms and another reads the stream as a consumer. The reader continues from
/// its group's state on the new master. Redis replicates asynchronously, so entries the old master
/// had acknowledged and not yet sent to the replica are lost (Redis' replication documentation):
/// only posts made before the poster heard of the loss may be missing, none is delivered twice,
/// and the order is kept. The measured numbers are printed.
@Suite(.serialized, .timeLimit(.minutes(2))) struct RedisDurableFailoverTests {
    static func endpoint(_ cluster: SentinelCluster, consumer: String) -> RedisEndpoint {
        var endpoint = RedisEndpoint(sentinels: cluster.sentinelAddresses, masterName: SentinelCluster.masterName,
                                     connectTimeout: .seconds(1), commandTimeout: .seconds(1))
        endpoint.durable = DurableMember.durable(["failover.durable"], consumer: consumer)
        return endpoint
    }

    @Test func theReaderContinuesOnTheNewMasterAndOnlyUnreplicatedPostsAreLost() throws {
        let cluster = try SentinelCluster()
        defer { cluster.shutDown() }
        let observer = try DurableMember("durable-failover-observer", endpoint: Self.endpoint(cluster, consumer: "observer"))
        defer { observer.shutDown() }
        try observer.observe("failover.durable")
        let poster = try DurableMember("durable-failover-poster", endpoint: Self.endpoint(cluster, consumer: "poster"))
        defer { poster.shutDown() }

        let pacer = PacedPoster(noticingLossOf: poster.center, on: poster.thread.loop) { n in
            try poster.post("failover.durable", n)
        }
        #expect(observer.seen.wait(for: 100))
        cluster.master.kill()
        let lastBeforeKill = pacer.last
        #expect(observer.seen.wait(seconds: 25) { $0.contains { $0.n > lastBeforeKill } }, "\(observer.center.redisMetrics!)")
        let flowing = pacer.last
        #expect(observer.seen.wait { ($0.last?.n ?? 0) > flowing + 100 })
        #expect(pacer.stop())
        try poster.center.flushRedisPosts()
        let last = pacer.last
        #expect(observer.seen.wait { $0.last?.n == last })

        let numbers = observer.numbers
        let received = Set(numbers)
        let lost = (1...last).filter { !received.contains($0) }
        let lossHeardAfter = try #require(pacer.lastBeforeLoss)
        let posterMetrics = try #require(poster.center.redisMetrics)
        let observerMetrics = try #require(observer.center.redisMetrics)
        // Lost: only what the old master had taken (answered, or in flight) before the poster
        // heard it was gone; nothing posted after. Never twice, always in order.
        #expect(lost.allSatisfy { $0 <= lossHeardAfter + 1 }, "\(lost) heard after \(lossHeardAfter) \(posterMetrics)")
        #expect(numbers.count == received.count, "delivered twice: \(numbers.count - received.count)")
        #expect(zip(numbers, numbers.dropFirst()).allSatisfy { $0 < $1 })
        #expect(posterMetrics.droppedWhileDisconnected == 0)
        print("durable failover: \(last) posts, lost \(lost.count) (\(lost.first.map { "\($0)" } ?? "-")…\(lost.last.map { "\($0)" } ?? "-")); posts made before the poster heard of the loss \(lossHeardAfter), of them unconfirmed at the loss \(posterMetrics.unconfirmedAtDisconnect); read again and not delivered twice \(observerMetrics.durableRedeliveriesSkipped); posts kept while disconnected and delivered \(last - lossHeardAfter)")
    }
}
