import Foundation
import PortRunLoopDBus
import PortRunLoopKit
import PortRunLoopRedis
import Testing
import PortRunLoopTestSupport

/// Posting and observing through a private redis-server within one process: typed userInfo, the
/// chosen delivery thread, object filtering, any-name observations, removal.
@Suite(.timeLimit(.minutes(1))) struct RedisRoundTripTests {
    @Test func aPostReachesAnObserverWithItsUserInfoOnTheChosenThread() throws {
        let fixture = try RedisFixture()
        defer { fixture.shutDown() }
        let delivery = try RunLoopThread(name: "redis-delivery")
        defer { delivery.stop() }
        let seen = Collector<String>()
        let observation = try fixture.center.addObserver(forName: .init("round.trip"), on: delivery.loop) { note in
            let onThread = delivery.loop.isCurrentThread
            let info = note.userInfo ?? [:]
            let data = info["data"] as? Data
            let nested = info["nested"] as? [String: Any]
            let list = info["list"] as? [Any]
            seen.append("\(onThread) \(note.object as? String ?? "nil") \(info["text"] as? String ?? "?") \(info["count"] as? Int ?? -1) "
                + "\(info["ratio"] as? Double ?? -1) \(info["flag"] as? Bool ?? false) \(data.map { Array($0) } ?? []) "
                + "\(nested?["inner"] as? String ?? "?") \(list?.count ?? -1) \(info["big"] as? UInt64 ?? 0)")
        }
        try fixture.center.post(name: .init("round.trip"), object: "doc-1", userInfo: [
            "text": "héllo \"quoted\"", "count": 42, "ratio": 0.25, "flag": true, "data": Data([0, 1, 255]),
            "nested": ["inner": "deep"], "list": [1, "two", 3.5], "big": UInt64.max,
        ])
        #expect(seen.wait(for: 1))
        #expect(seen.values == ["true doc-1 héllo \"quoted\" 42 0.25 true [0, 1, 255] deep 3 18446744073709551615"])
        #expect(fixture.center.isConnected)
        #expect(fixture.center.redisState == .connected)
        observation.remove()
    }

    @Test func anObjectFilterAndAnAnyNameObservationEachGetAPostOnce() throws {
        let fixture = try RedisFixture()
        defer { fixture.shutDown() }
        let named = Collector<String>()
        let any = Collector<String>()
        let filtered = Collector<String>()
        let a = try fixture.center.addObserver(forName: .init("filter.a"), on: fixture.thread.loop) { named.append($0.object as? String ?? "nil") }
        let b = try fixture.center.addObserver(forName: nil, on: fixture.thread.loop) { any.append($0.name.rawValue) }
        let c = try fixture.center.addObserver(forName: .init("filter.a"), object: "wanted", on: fixture.thread.loop) {
            filtered.append($0.object as? String ?? "nil")
        }
        try fixture.center.post(name: .init("filter.a"), object: "other")
        try fixture.center.post(name: .init("filter.a"), object: "wanted")
        try fixture.center.post(name: .init("filter.b"))
        try fixture.center.post(name: .init("filter.end"))
        #expect(any.wait(for: 4))
        #expect(named.wait(for: 2))
        // The channel subscription and the pattern subscription both match filter.a: delivered once each.
        #expect(any.values == ["filter.a", "filter.a", "filter.b", "filter.end"])
        #expect(named.values == ["other", "wanted"])
        #expect(filtered.values == ["wanted"])
        a.remove(); b.remove(); c.remove()
    }

    @Test func aRemovedObservationReceivesNothingMore() throws {
        let fixture = try RedisFixture()
        defer { fixture.shutDown() }
        let removed = Collector<Int>()
        let kept = Collector<Int>()
        let first = try fixture.center.addObserver(forName: .init("removal"), on: fixture.thread.loop) { note in
            removed.append(note.userInfo?["n"] as? Int ?? -1)
        }
        let second = try fixture.center.addObserver(forName: .init("removal"), on: fixture.thread.loop) { note in
            kept.append(note.userInfo?["n"] as? Int ?? -1)
        }
        try fixture.center.post(name: .init("removal"), userInfo: ["n": 1])
        #expect(removed.wait(for: 1))
        #expect(kept.wait(for: 1))
        first.remove()
        try fixture.center.post(name: .init("removal"), userInfo: ["n": 2])
        #expect(kept.wait(for: 2))
        #expect(removed.values == [1])
        // The last observation of the channel goes: the channel is unsubscribed, then observed again.
        second.remove()
        let again = Collector<Int>()
        let third = try fixture.center.addObserver(forName: .init("removal"), on: fixture.thread.loop) { note in
            again.append(note.userInfo?["n"] as? Int ?? -1)
        }
        try fixture.center.post(name: .init("removal"), userInfo: ["n": 3])
        #expect(again.wait(for: 1))
        #expect(again.values == [3])
        #expect(kept.values == [1, 2])
        third.remove()
    }

    @Test func anObserverAddedOnTheLoopThreadItselfIsInEffectWhenTheCallReturns() throws {
        let fixture = try RedisFixture()
        defer { fixture.shutDown() }
        let seen = Collector<String>()
        let (outcome, observation) = try fixture.thread.loop.performAndWait(timeout: .seconds(10)) { () -> (String, BusObservation?) in
            do {
                let observation = try fixture.center.addObserver(forName: .init("on.loop"), on: fixture.thread.loop) { note in
                    seen.append(note.name.rawValue)
                }
                try fixture.center.post(name: .init("on.loop"))
                return ("ok", observation)
            } catch {
                return ("\(error)", nil)
            }
        }
        #expect(outcome == "ok")
        #expect(seen.wait(for: 1))
        #expect(seen.values == ["on.loop"])
        observation?.remove()
    }

    @Test func signalObservationIsDBusOnly() throws {
        let fixture = try RedisFixture()
        defer { fixture.shutDown() }
        #expect {
            _ = try fixture.center.addSignalObserver(matching: BusMatchRule(member: "Anything"), on: fixture.thread.loop) { _ in }
        } throws: { error in
            guard case BusNotificationError.invalidMatchRule = error else { return false }
            return true
        }
    }
}
