import Foundation
import PortRunLoopDBus
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Posting and observing through a private dbus-daemon: payloads, filters, the delivery thread,
/// the observer-object and forwarding forms, and removal.
@Suite(.timeLimit(.minutes(1))) struct BusNotificationRoundTripTests {
    @Test func userInfoRoundTripsThroughTheBus() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let received = Collector<[String]>()
        let observation = try fixture.center.addObserver(forName: .init("round.trip"), on: fixture.thread.loop) { note in
            let info = note.userInfo ?? [:]
            let nested = info["nested"] as? [String: Any]
            let list = info["list"] as? [Any]
            received.append([
                note.name.rawValue, note.object as? String ?? "nil",
                "\(info["text"] as? String ?? "?")", "\(info["int"] as? Int ?? 0)", "\(info["big"] as? UInt64 ?? 0)",
                "\(info["double"] as? Double ?? 0)", "\(info["flag"] as? Bool ?? false)",
                "\((info["data"] as? Data)?.count ?? -1)", "\(list?.count ?? -1)", "\(list?.first as? String ?? "?")",
                "\(nested?["inner"] as? Int ?? 0)",
            ])
        }
        try fixture.center.post(name: .init("round.trip"), object: "sender-1", userInfo: [
            "text": "héllo", "int": -42, "big": UInt64.max, "double": 2.5, "flag": true,
            "data": Data([0, 1, 2, 255]), "list": ["a", 1], "nested": ["inner": 7],
        ])
        #expect(received.wait(for: 1))
        #expect(received.values.first == ["round.trip", "sender-1", "héllo", "-42", "\(UInt64.max)", "2.5", "true", "4", "2", "a", "7"])
        observation.remove()
    }

    @Test func deliversOnTheChosenLoopThread() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let deliveryThread = try RunLoopThread(name: "bus-delivery")
        defer { deliveryThread.stop() }
        let onChosen = Collector<Bool>()
        let observation = try fixture.center.addObserver(forName: .init("thread.check"), on: deliveryThread.loop) { _ in
            onChosen.append(deliveryThread.loop.isCurrentThread && !fixture.thread.loop.isCurrentThread)
        }
        for _ in 0..<3 { try fixture.center.post(name: .init("thread.check")) }
        #expect(onChosen.wait(for: 3))
        #expect(onChosen.values == [true, true, true])
        observation.remove()
    }

    @Test func filtersByNameAndObject() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let named = Collector<String>()
        let anyName = Collector<String>()
        let a = try fixture.center.addObserver(forName: .init("filter.a"), object: "x", on: fixture.thread.loop) { note in
            named.append("\(note.name.rawValue)/\(note.object as? String ?? "nil")")
        }
        let b = try fixture.center.addObserver(forName: nil, on: fixture.thread.loop) { note in
            anyName.append(note.name.rawValue)
        }
        try fixture.center.post(name: .init("filter.a"), object: "y")
        try fixture.center.post(name: .init("filter.b"), object: "x")
        try fixture.center.post(name: .init("filter.a"), object: "x")
        #expect(anyName.wait(for: 3))
        #expect(named.values == ["filter.a/x"])
        #expect(anyName.values == ["filter.a", "filter.b", "filter.a"])
        a.remove(); b.remove()
    }

    /// A name (or object) too long for a bus match rule is observed all the same: matched by the
    /// center rather than by the daemon.
    @Test func namesAndObjectsTooLongForAMatchRuleAreObserved() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let long = "long." + String(repeating: "n", count: 4_000)
        let object = String(repeating: "o", count: 4_000)
        let seen = Collector<String>()
        let observation = try fixture.center.addObserver(forName: .init(long), object: object, on: fixture.thread.loop) { note in
            seen.append("\(note.name.rawValue.count)/\((note.object as? String)?.count ?? 0)")
        }
        try fixture.center.post(name: .init(long), object: "other")
        try fixture.center.post(name: .init("short"), object: object)
        try fixture.center.post(name: .init(long), object: object)
        #expect(seen.wait(for: 1))
        try fixture.sync()
        #expect(seen.values == ["\(long.count)/\(object.count)"])
        observation.remove()
    }

    @Test func observerObjectIsHeldWeaklyAndRemovable() throws {
        final class Watcher: @unchecked Sendable {
            let seen = Collector<String>()
            func changed(_ note: Notification) { seen.append(note.name.rawValue) }
        }
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        var watcher: Watcher? = Watcher()
        let seen = watcher!.seen
        let observation = try fixture.center.addObserver(watcher!, name: .init("weak.one"), on: fixture.thread.loop) { me, note in
            me.changed(note)
        }
        try fixture.center.post(name: .init("weak.one"))
        #expect(seen.wait(for: 1))
        fixture.center.removeObserver(watcher!, name: .init("weak.one"))
        #expect(!observation.isActive)
        try fixture.center.post(name: .init("weak.one"))
        try fixture.sync()
        #expect(seen.values.count == 1)
        // A second observation ends by itself once its observer is gone.
        let later = try fixture.center.addObserver(watcher!, name: .init("weak.two"), on: fixture.thread.loop) { me, note in
            me.changed(note)
        }
        watcher = nil
        try fixture.center.post(name: .init("weak.two"))
        try fixture.sync()
        #expect(!later.isActive)
        #expect(seen.values == ["weak.one"])
    }

    @Test func forwardsIntoAThreadNotificationCenter() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let local = ThreadNotificationCenter()
        let observerThread = try RunLoopThread(name: "local-observer")
        defer { observerThread.stop() }
        let seen = Collector<String>()
        let localObservation = local.addObserver(forName: .init("forwarded"), on: observerThread.loop) { note in
            seen.append("\(note.object as? String ?? "nil") on \(observerThread.loop.isCurrentThread)")
        }
        let forward = try fixture.center.addObserver(forName: .init("forwarded"), forwardingTo: local)
        try fixture.center.post(name: .init("forwarded"), object: "obj")
        #expect(seen.wait(for: 1))
        #expect(seen.values == ["obj on true"])
        forward.remove(); localObservation.remove()
    }

    @Test func removedObservationReceivesNothingMore() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let seen = Collector<Int>()
        let observation = try fixture.center.addObserver(forName: .init("removal"), on: fixture.thread.loop) { note in
            seen.append(note.userInfo?["n"] as? Int ?? -1)
        }
        try fixture.center.post(name: .init("removal"), userInfo: ["n": 1])
        #expect(seen.wait(for: 1))
        fixture.center.removeObserver(observation)
        #expect(!observation.isActive)
        try fixture.center.post(name: .init("removal"), userInfo: ["n": 2])
        try fixture.sync()
        #expect(seen.values == [1])
        #expect(fixture.center.metrics.posted == 3)
    }
}
