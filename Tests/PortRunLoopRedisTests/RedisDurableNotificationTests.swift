import Foundation
import PortRunLoopKit
import PortRunLoopRedis
import Testing
import PortRunLoopTestSupport

/// Durable notifications on Redis Streams against real `redis-server` processes: the round trip,
/// an observing center closed and made again with the same consumer mid-stream, the server killed
/// and restarted with its append-only file, retention exceeded (counted), and order per poster.
@Suite(.timeLimit(.minutes(1))) struct RedisDurableNotificationTests {
    @Test func aDurablePostIsAppendedToItsStreamDeliveredAndAcknowledged() throws {
        let server = try RedisServer()
        defer { server.stop() }
        let durable = DurableMember.durable(["config.changed"])
        let observer = try DurableMember("durable-observer", endpoint: DurableMember.endpoint(port: server.port, durable: durable))
        defer { observer.shutDown() }
        try observer.observe("config.changed")
        var posterDurable = durable
        posterDurable.consumer = "poster"
        let poster = try DurableMember("durable-poster", endpoint: DurableMember.endpoint(port: server.port, durable: posterDurable))
        defer { poster.shutDown() }
        for n in 1...20 { try poster.post("config.changed", n) }
        // A name that is not durable still travels over pub/sub beside it.
        try observer.observe("plain")
        try poster.post("plain", 100)
        #expect(observer.seen.wait { $0.count >= 21 })
        #expect(observer.numbers.filter { $0 < 100 } == Array(1...20))
        #expect(observer.numbers.contains(100))
        try poster.center.flushRedisPosts()
        let posterMetrics = try #require(poster.center.redisMetrics)
        #expect(posterMetrics.published == 21 && posterMetrics.publishConfirmed == 21, "\(posterMetrics)")
        // In the stream, in the binary payload's field; every entry acknowledged.
        let stream = "portrunloop.notification.config.changed"
        #expect(try server.cli(["XLEN", stream]).output.trimmingCharacters(in: .whitespacesAndNewlines) == "20")
        #expect(try server.cli(["XRANGE", stream, "-", "+", "COUNT", "1"]).output.contains("payload"))
        let acknowledged = PortRunLoopTestSupport.Locked(false)
        #expect(SentinelCluster.poll {
            acknowledged.withLock { $0 = observer.center.redisMetrics?.durableAcknowledged == 20 }
            return acknowledged.withLock { $0 }
        })
        let pending = try server.cli(["XPENDING", stream, "service"]).output
        #expect(pending.hasPrefix("0"), "\(pending)")
    }

    @Test func anObserverMadeAgainWithItsConsumerNameGetsWhatWasPostedMeanwhileAndNoAcknowledgedEntryTwice() throws {
        let server = try RedisServer()
        defer { server.stop() }
        let durable = DurableMember.durable(["cache.invalidated"])
        let endpoint = DurableMember.endpoint(port: server.port, durable: durable)
        var posterDurable = durable
        posterDurable.consumer = "poster"
        let poster = try DurableMember("durable-poster", endpoint: DurableMember.endpoint(port: server.port, durable: posterDurable))
        defer { poster.shutDown() }
        let first = try DurableMember("durable-first", endpoint: endpoint)
        try first.observe("cache.invalidated")
        // Posted from another thread while the observer goes and comes back.
        let postedAll = DispatchSemaphore(value: 0)
        let firstSawSome = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            for n in 1...300 {
                try? poster.post("cache.invalidated", n)
                if n == 100 { firstSawSome.wait() }
            }
            postedAll.signal()
        }
        #expect(first.seen.wait { $0.count >= 50 })
        first.shutDown()
        firstSawSome.signal()
        let stream = "portrunloop.notification.cache.invalidated"
        // What the first center was handed and did not acknowledge before it closed.
        let unacknowledged = Int(try server.cli(["XPENDING", stream, "service"]).output.split(separator: "\n").first ?? "") ?? -1
        #expect(unacknowledged >= 0)
        #expect(postedAll.wait(timeout: .now() + 20) == .success)

        let second = try DurableMember("durable-second", endpoint: endpoint)
        defer { second.shutDown() }
        try second.observe("cache.invalidated")
        let firstNumbers = first.numbers
        #expect(second.seen.wait { Set(firstNumbers + $0.map(\.n)).count == 300 }, "\(firstNumbers.count) + \(second.numbers.count)")
        let both = firstNumbers + second.numbers
        // Nothing lost; delivered twice only what was handed out and not acknowledged.
        #expect(Set(both) == Set(1...300))
        let twice = both.count - Set(both).count
        #expect(twice <= unacknowledged, "twice \(twice), unacknowledged at the close \(unacknowledged)")
        // In order within each center.
        #expect(firstNumbers == firstNumbers.sorted() && second.numbers == second.numbers.sorted())
    }

    @Test func postsMadeWhileTheServerIsDownAreKeptAndDeliveredFromItsAppendOnlyFile() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let server = try RedisServer(extraArguments: ["--appendonly", "yes", "--appendfsync", "always", "--dir", directory.url.path])
        defer { server.stop() }
        let durable = DurableMember.durable(["config.changed"])
        let observer = try DurableMember("durable-observer", endpoint: DurableMember.endpoint(port: server.port, durable: durable))
        defer { observer.shutDown() }
        try observer.observe("config.changed")
        var posterDurable = durable
        posterDurable.consumer = "poster"
        let poster = try DurableMember("durable-poster", endpoint: DurableMember.endpoint(port: server.port, durable: posterDurable))
        defer { poster.shutDown() }
        for n in 1...10 { try poster.post("config.changed", n) }
        #expect(observer.seen.wait(for: 10))
        try poster.center.flushRedisPosts()

        let lost = Collector<Int>()
        let lossObservation = poster.center.addDisconnectionObserver(on: poster.thread.loop) { _ in lost.append(1) }
        defer { lossObservation.remove() }
        server.kill()
        #expect(lost.wait(for: 1))
        for n in 11...30 { try poster.post("config.changed", n) } // kept: the server is down
        try server.restart()
        #expect(observer.seen.wait(for: 30), "\(observer.numbers) \(observer.center.redisMetrics!)")
        #expect(observer.numbers == Array(1...30))
        let metrics = try #require(observer.center.redisMetrics)
        #expect(metrics.durableRetentionGaps == 0 && metrics.durableLostToRetention == 0, "\(metrics)")
    }

    @Test func entriesTrimmedBeforeTheGroupReadThemAreCountedAndTheRestDelivered() throws {
        // Small stream nodes, so that `MAXLEN ~ 10` trims close to 10.
        let server = try RedisServer(extraArguments: ["--stream-node-max-entries", "5"])
        defer { server.stop() }
        let durable = DurableMember.durable(["config.changed"], maximumLength: 10)
        let endpoint = DurableMember.endpoint(port: server.port, durable: durable)
        let first = try DurableMember("durable-first", endpoint: endpoint)
        try first.observe("config.changed")
        var posterDurable = durable
        posterDurable.consumer = "poster"
        let poster = try DurableMember("durable-poster", endpoint: DurableMember.endpoint(port: server.port, durable: posterDurable))
        defer { poster.shutDown() }
        try poster.post("config.changed", 0)
        #expect(first.seen.wait(for: 1))
        let acknowledged = SentinelCluster.poll { first.center.redisMetrics?.durableAcknowledged == 1 }
        #expect(acknowledged)
        first.shutDown()
        for n in 1...200 { try poster.post("config.changed", n) }
        try poster.center.flushRedisPosts()
        let retained = Int(try server.cli(["XLEN", "portrunloop.notification.config.changed"]).output
            .trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        #expect(retained >= 10 && retained < 200, "\(retained)")

        let second = try DurableMember("durable-second", endpoint: endpoint)
        defer { second.shutDown() }
        try second.observe("config.changed")
        #expect(second.seen.wait(for: retained))
        let metrics = try #require(second.center.redisMetrics)
        #expect(metrics.durableRetentionGaps == 1, "\(metrics)")
        // Every post is either delivered or counted as lost, exactly.
        #expect(metrics.durableLostToRetention == 200 - retained, "\(metrics), retained \(retained)")
        #expect(second.numbers == Array((200 - retained + 1)...200))
    }

    @Test func eachPostersOrderIsKept() throws {
        let server = try RedisServer()
        defer { server.stop() }
        let durable = DurableMember.durable(["ordered"])
        let observer = try DurableMember("durable-observer", endpoint: DurableMember.endpoint(port: server.port, durable: durable))
        defer { observer.shutDown() }
        try observer.observe(nil) // every name: the durable ones' streams too
        var posters: [DurableMember] = []
        defer { posters.forEach { $0.shutDown() } }
        for index in 0..<3 {
            var posterDurable = durable
            posterDurable.consumer = "poster-\(index)"
            posters.append(try DurableMember("durable-poster-\(index)", endpoint: DurableMember.endpoint(port: server.port, durable: posterDurable)))
        }
        let done = DispatchGroup()
        for (index, poster) in posters.enumerated() {
            done.enter()
            Thread.detachNewThread {
                for n in 1...300 { try? poster.post("ordered", n, poster: "poster-\(index)") }
                done.leave()
            }
        }
        #expect(done.wait(timeout: .now() + 20) == .success)
        #expect(observer.seen.wait(for: 900))
        for index in 0..<3 {
            let numbers = observer.seen.values.filter { $0.poster == "poster-\(index)" }.map(\.n)
            #expect(numbers == Array(1...300), "poster \(index): \(numbers.count)")
        }
    }
}
