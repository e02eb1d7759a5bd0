import Foundation
import Logging
import PortRunLoopKit
import PortRunLoopRedis
import Testing
import PortRunLoopTestSupport

/// Centers through a real Sentinel failover: the master killed (SIGKILL) while one center posts
/// every 2 ms and another observes; posts flow again within the sentinels' failover time plus 1 s,
/// and the poster's posts made during the gap are buffered and delivered. A failover the
/// sentinels make on request is followed through `+switch-master`, and the state observers see
/// each step in order.
@Suite(.serialized, .timeLimit(.minutes(2))) struct RedisSentinelFailoverTests {
    /// A center on its own loop thread, observing `name` (the values of `n` and when each came).
    final class Member: @unchecked Sendable {
        let thread: RunLoopThread
        let center: BusNotificationCenter
        let seen = Collector<(n: Int, at: ContinuousClock.Instant)>()
        let states = Collector<(state: RedisConnectionState, at: ContinuousClock.Instant)>()
        private var tokens: [AnyObject] = []

        init(_ label: String, cluster: SentinelCluster, name: String) throws {
            thread = try RunLoopThread(name: label)
            center = try BusNotificationCenter(redis: RedisEndpoint(sentinels: cluster.sentinelAddresses, masterName: SentinelCluster.masterName,
                                                                    connectTimeout: .seconds(1), commandTimeout: .seconds(1)),
                                               loop: thread.loop)
            let seen = seen, states = states
            tokens.append(try center.addObserver(forName: .init(name), on: thread.loop) { note in
                seen.append((note.userInfo?["n"] as? Int ?? -1, .now))
            })
            tokens.append(center.addRedisStateObserver(on: thread.loop) { states.append(($0, .now)) }!)
        }

        func shutDown() {
            tokens.removeAll()
            center.close()
            thread.stop()
        }
    }

    @Test func postsFlowAgainWithinTheFailoverTimeAndPostsMadeDuringTheGapAreDelivered() throws {
        let cluster = try SentinelCluster()
        defer { cluster.shutDown() }
        let poster = try Member("sentinel-poster", cluster: cluster, name: "failover.stream")
        defer { poster.shutDown() }
        let observer = try Member("sentinel-observer", cluster: cluster, name: "failover.stream")
        defer { observer.shutDown() }
        // When the sentinels announce the new master, heard by a plain client of theirs.
        nonisolated(unsafe) let announcement = try RawRedisClient(port: cluster.sentinelPorts[2])
        try announcement.subscribe("+switch-master")
        let announced = Collector<ContinuousClock.Instant>()
        Thread.detachNewThread { // the only user of the client from here on
            if (try? announcement.nextMessage()) != nil { announced.append(.now) }
        }

        let pacer = PacedPoster(noticingLossOf: poster.center, on: poster.thread.loop) { n in
            try poster.center.post(name: .init("failover.stream"), userInfo: ["n": n])
        }
        #expect(observer.seen.wait(for: 50))
        let killedAt = ContinuousClock.now
        cluster.master.kill() // returns once the process has exited
        let lastBeforeKill = pacer.last
        // Flowing again: the observer gets posts made after the kill, and keeps getting them.
        #expect(observer.seen.wait(seconds: 25) { $0.contains { $0.n > lastBeforeKill } }, "\(poster.center.redisMetrics!)")
        let resumedAt = observer.seen.values.first { $0.n > lastBeforeKill }?.at ?? .now
        let flowing = pacer.last
        #expect(observer.seen.wait { ($0.last?.n ?? 0) > flowing + 100 })
        #expect(pacer.stop())
        try poster.center.flushRedisPosts()
        let last = pacer.last
        #expect(poster.seen.wait { $0.last?.n == last })
        #expect(observer.seen.wait { $0.last?.n == last })
        #expect(announced.wait(for: 1))

        let gap = resumedAt - killedAt
        let failover = (announced.values.first ?? .now) - killedAt
        #expect(gap <= failover + .seconds(1), "gap \(gap), failover \(failover)")
        #expect(failover < .milliseconds(SentinelCluster.downAfter + SentinelCluster.failoverTimeout) + .seconds(2))
        // The poster is its own subscriber and restores its subscription before it sends what it
        // kept: every post made once it heard of the loss reaches it. It may miss posts made
        // before: those in flight (sent, unanswered), and one the old master answered but died
        // before sending on.
        let metrics = try #require(poster.center.redisMetrics)
        let atPoster = Set(poster.seen.values.map(\.n))
        let lostAtPoster = (1...last).filter { !atPoster.contains($0) }
        let lossHeardAfter = try #require(pacer.lastBeforeLoss)
        #expect(lostAtPoster.allSatisfy { $0 <= lossHeardAfter + 1 }, "\(lostAtPoster) heard after \(lossHeardAfter) \(metrics)")
        #expect(metrics.droppedWhileDisconnected == 0)
        #expect(metrics.connectionLosses == 1 && metrics.reconnections == 1, "\(metrics)")
        // Another subscriber misses, besides those, what was published before it was subscribed
        // to the new master (pub/sub is at most once): order kept, nothing twice.
        let atObserver = observer.seen.values.map(\.n)
        #expect(zip(atObserver, atObserver.dropFirst()).allSatisfy { $0 < $1 })
        let lostAtObserver = last - Set(atObserver).count
        let bufferedSent = last - lastBeforeKill
        print("sentinel failover: gap \(gap.milliseconds) ms (SIGKILL to the first post made after it delivered), sentinels' +switch-master \(failover.milliseconds) ms after SIGKILL; \(last) posts, lost at the poster \(lostAtPoster.count) (unconfirmed at the loss \(metrics.unconfirmedAtDisconnect)), at the other center \(lostAtObserver); posts made after the kill \(bufferedSent)")
        // Each center followed the master to the replica.
        for member in [poster, observer] {
            let states = member.states.values.map(\.state)
            let replica = RedisSentinels.Address(host: "127.0.0.1", port: cluster.replica.port)
            // Connected, lost, then (asking, the old master named and refused)*, the new master, connected.
            #expect(states.count >= 4 && states.first == .connected && states.dropFirst().first?.isDisconnected == true, "\(states)")
            #expect(states.last == .connected, "\(states)")
            let arrival = states.dropLast().last
            #expect(arrival == .masterChanged(replica) || arrival == .masterFound(replica), "\(states)")
            for (index, state) in states.enumerated() {
                if case .masterFound = state {
                    guard case .askingSentinel? = states[safe: index - 1] else {
                        Issue.record("a master found without a sentinel asked just before: \(states)")
                        continue
                    }
                }
            }
        }
    }

    /// `SENTINEL FAILOVER`: the old master stays up, so only `+switch-master` moves the center.
    @Test func aFailoverIsFollowedThroughSwitchMasterAndTheObserverSeesEachStepInOrder() throws {
        let cluster = try SentinelCluster()
        defer { cluster.shutDown() }
        let member = try Member("sentinel-switch", cluster: cluster, name: "switch.stream")
        defer { member.shutDown() }
        #expect(member.states.wait { $0.map(\.state) == [.connected] })
        let requested = try SentinelCluster.command(cluster.sentinelPorts[0], ["SENTINEL", "FAILOVER", SentinelCluster.masterName])
        #expect(requested == .status("OK"), "\(requested)")
        let replica = RedisSentinels.Address(host: "127.0.0.1", port: cluster.replica.port)
        #expect(member.states.wait { $0.count >= 2 && $0.last?.state == .connected })
        let states = member.states.values.map(\.state)
        // Connected to the old master, told it moved (its connections ended), then at the new one.
        #expect(states.count == 4, "\(states)")
        #expect(states.first == .connected)
        if case .disconnected(let why)? = states.dropFirst().first {
            #expect(why.contains("the master moved to \(replica) (switch-master)"), "\(why)")
        } else {
            Issue.record("not disconnected first: \(states)")
        }
        #expect(Array(states.suffix(2)) == [.masterChanged(replica), .connected])
        // Posts go to the new master.
        try member.center.post(name: .init("switch.stream"), userInfo: ["n": 1])
        #expect(member.seen.wait(for: 1))
        let metrics = try #require(member.center.redisMetrics)
        #expect(metrics.reconnections == 1 && metrics.failedAttempts == 0, "\(metrics)")
        // The other sentinels learn the new master from the leader's hello messages (every 2 s).
        #expect(eventually { cluster.masterPort(accordingTo: cluster.sentinelPorts[1]) == cluster.replica.port })
    }
}

extension Array {
    /// The element at `index`, or nil outside the array.
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}

extension Duration {
    /// Whole milliseconds.
    var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
