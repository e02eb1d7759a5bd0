import Foundation
import Logging
import PortRunLoopKit
import PortRunLoopRedis
import Testing
import PortRunLoopTestSupport

/// Finding the master through real Redis Sentinels: a sentinel that is down or does not know the
/// master is skipped, none answering is a typed error naming each one's reason, and a replica a
/// sentinel names as the master is refused by its `ROLE`. The endpoint's checks.
@Suite(.serialized, .timeLimit(.minutes(2))) struct RedisSentinelTests {
    static func endpoint(_ sentinels: [(host: String, port: Int)], masterName: String = SentinelCluster.masterName) -> RedisEndpoint {
        RedisEndpoint(sentinels: sentinels, masterName: masterName, connectTimeout: .seconds(1), commandTimeout: .seconds(1))
    }

    @Test func aCenterFindsTheMasterThroughTheSentinelsOneOfWhichIsDown() throws {
        let cluster = try SentinelCluster()
        defer { cluster.shutDown() }
        let down = cluster.sentinelPorts[0]
        cluster.killSentinel(down)
        let thread = try RunLoopThread(name: "sentinel-discovery")
        defer { thread.stop() }
        let log = LogRecorder()
        let center = try BusNotificationCenter(redis: Self.endpoint(cluster.sentinelAddresses), loop: thread.loop, logger: log.logger)
        defer { center.close() }
        #expect(center.redisState == .connected)
        // The sentinel that is down was asked first and skipped; the next one named the master.
        let asked = log.entries.filter { $0.message == "Asking a Redis sentinel for the master" }.compactMap { $0["portrunloop.redis.sentinel"] }
        #expect(asked == ["127.0.0.1:\(down)", "127.0.0.1:\(cluster.sentinelPorts[1])"])
        let skipped = log.entries.first { $0.message == "Redis sentinel gave no master" }
        #expect(skipped?["portrunloop.redis.sentinel"] == "127.0.0.1:\(down)")
        #expect(skipped?["portrunloop.bus.reason"]?.contains("refused") == true, "\(String(describing: skipped?["portrunloop.bus.reason"]))")
        let named = log.entries.first { $0.message == "Redis sentinel named the master" }
        #expect(named?["portrunloop.redis.master"] == "127.0.0.1:\(cluster.master.port)")
        // The connections are the master's: a post reaches a client of the master.
        let seen = Collector<Int>()
        let observation = try center.addObserver(forName: .init("sentinel.found"), on: thread.loop) { note in
            seen.append(note.userInfo?["n"] as? Int ?? -1)
        }
        defer { observation.remove() }
        let published = try cluster.master.cli(["PUBLISH", "portrunloop.notification.sentinel.found", #"{"v":1,"name":"sentinel.found","userInfo":{"n":{"int":7}}}"#])
        #expect(published.output.contains("1"), "\(published.output)")
        #expect(seen.wait(for: 1))
        #expect(seen.values == [7])
        #expect(center.redisMetrics?.failedAttempts == 0)

        // A master name no sentinel knows: each answers nil, and the center says so.
        #expect {
            _ = try BusNotificationCenter(redis: Self.endpoint(cluster.sentinelAddresses, masterName: "unknown"), loop: thread.loop)
        } throws: { error in
            guard case BusNotificationError.connectionFailed(let why) = error else { return false }
            return why.contains("no sentinel named master unknown") && why.contains("127.0.0.1:\(cluster.sentinelPorts[2]) does not know the master")
        }
    }

    @Test func noSentinelAnsweringIsATypedErrorNamingEachOne() throws {
        let ports = try [freeLoopbackPort(), freeLoopbackPort()] // nothing listens there
        let thread = try RunLoopThread(name: "sentinel-absent")
        defer { thread.stop() }
        let started = ContinuousClock.now
        #expect {
            _ = try BusNotificationCenter(redis: Self.endpoint(ports.map { ("127.0.0.1", $0) }), loop: thread.loop, callTimeout: .seconds(1))
        } throws: { error in
            guard case BusNotificationError.connectionFailed(let why) = error else { return false }
            return why.hasPrefix("redis-sentinel://mymaster@127.0.0.1:\(ports[0]),127.0.0.1:\(ports[1]): no sentinel named master mymaster")
                && ports.allSatisfy { why.contains("127.0.0.1:\($0): ") }
        }
        #expect(ContinuousClock.now - started < .seconds(3))
    }

    /// A sentinel that monitors the replica under a name answers with the replica's address: the
    /// center's `ROLE` check refuses it rather than posting to a server that refuses writes.
    @Test func aReplicaNamedAsTheMasterIsRefusedByItsRole() throws {
        let cluster = try SentinelCluster(sentinels: 0)
        defer { cluster.shutDown() }
        let stale = try cluster.startSentinel(monitoring: cluster.replica.port, name: "stale", quorum: 1)
        #expect(SentinelCluster.poll {
            SentinelCluster.text(try SentinelCluster.command(stale, ["SENTINEL", "get-master-addr-by-name", "stale"])).contains("\(cluster.replica.port)")
        })
        let thread = try RunLoopThread(name: "sentinel-stale")
        defer { thread.stop() }
        #expect {
            _ = try BusNotificationCenter(redis: Self.endpoint([("127.0.0.1", stale)], masterName: "stale"), loop: thread.loop)
        } throws: { error in
            guard case BusNotificationError.connectionFailed(let why) = error else { return false }
            return why.contains("127.0.0.1:\(cluster.replica.port): not the master (ROLE: slave)")
        }
    }

    @Test func theEndpointDescribesItsSentinelsWithoutPasswords() {
        var endpoint = RedisEndpoint(sentinels: [("127.0.0.1", 26379), ("::1", 26380)], masterName: "mymaster",
                                     sentinelPassword: "sentinel-secret", username: "app", password: "master-secret")
        #expect(endpoint.description == "redis-sentinel://app@mymaster@127.0.0.1:26379,[::1]:26380")
        var dumped = ""
        dump(endpoint, to: &dumped)
        #expect(!dumped.contains("secret"), "\(dumped)")
        #expect(dumped.contains("(password set)"))
        endpoint.sentinels = nil
        #expect(endpoint.description == "redis://app@127.0.0.1:26379")
    }

    @Test func aSentinelGivenByNameIsRefusedWithItsReason() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RedisEndpoint(sentinels: [("sentinel.example", 26379)], masterName: "mymaster")
        }
        expectMessage(result, contains: "\"sentinel.example\" is not an IP address")
    }

    @Test func aMasterNameWithASpaceIsRefusedWithItsReason() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var endpoint = RedisEndpoint(sentinels: [("127.0.0.1", 26379)], masterName: "mymaster")
            endpoint.sentinels?.masterName = "my master"
        }
        expectMessage(result, contains: "masterName \"my master\" is empty or holds whitespace")
    }
}
