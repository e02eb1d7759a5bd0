import Foundation
import PortRunLoopDBus
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Apple's suspension rules: `.drop`, `.coalesce`, `.hold` (bounded, counted overflow),
/// `.deliverImmediately`, and a post's `deliverImmediately` overriding them.
@Suite(.timeLimit(.minutes(1))) struct BusSuspensionTests {
    /// Observes `name` with `behavior`, recording each notification's `n`.
    private func observe(_ fixture: BusFixture, _ name: String, _ behavior: BusSuspensionBehavior,
                         into seen: Collector<String>) throws -> BusObservation {
        try fixture.center.addObserver(forName: .init(name), suspensionBehavior: behavior, on: fixture.thread.loop) { note in
            seen.append("\(note.object as? String ?? "-")\(note.userInfo?["n"] as? Int ?? -1)")
        }
    }

    private func post(_ fixture: BusFixture, _ name: String, _ numbers: ClosedRange<Int>, object: String? = nil) throws {
        for n in numbers { try fixture.center.post(name: .init(name), object: object, userInfo: ["n": n]) }
    }

    @Test func dropDiscardsWhatArrivesWhileSuspended() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let seen = Collector<String>()
        let observation = try observe(fixture, "s.drop", .drop, into: seen)
        fixture.center.suspended = true
        #expect(fixture.center.suspended)
        try post(fixture, "s.drop", 1...3)
        try fixture.sync()
        fixture.center.suspended = false
        try post(fixture, "s.drop", 4...4)
        #expect(seen.wait(for: 1))
        try fixture.sync()
        #expect(seen.values == ["-4"])
        #expect(fixture.center.metrics.droppedWhileSuspended == 3)
        observation.remove()
    }

    @Test func coalesceKeepsTheLastPerNameAndObject() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let seen = Collector<String>()
        let observation = try observe(fixture, "s.coalesce", .coalesce, into: seen)
        fixture.center.suspended = true
        try post(fixture, "s.coalesce", 1...1, object: "x")
        try post(fixture, "s.coalesce", 2...2, object: "y")
        try post(fixture, "s.coalesce", 3...3, object: "x")
        try fixture.sync()
        #expect(seen.values.isEmpty)
        fixture.center.suspended = false
        #expect(seen.wait(for: 2))
        try fixture.sync()
        #expect(seen.values == ["y2", "x3"])
        #expect(fixture.center.metrics.coalesced == 1)
        observation.remove()
    }

    @Test func holdDeliversEverythingInOrderOnResume() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let seen = Collector<String>()
        let observation = try observe(fixture, "s.hold", .hold, into: seen)
        fixture.center.suspended = true
        try post(fixture, "s.hold", 1...5)
        try fixture.sync()
        #expect(seen.values.isEmpty)
        fixture.center.suspended = false
        try post(fixture, "s.hold", 6...6)
        #expect(seen.wait(for: 6))
        #expect(seen.values == ["-1", "-2", "-3", "-4", "-5", "-6"])
        observation.remove()
    }

    @Test func holdIsBoundedAndCountsTheOverflow() throws {
        let fixture = try BusFixture(heldNotificationLimit: 3)
        defer { fixture.shutDown() }
        let seen = Collector<String>()
        let observation = try observe(fixture, "s.bounded", .hold, into: seen)
        fixture.center.suspended = true
        try post(fixture, "s.bounded", 1...5)
        try fixture.sync()
        fixture.center.suspended = false
        #expect(seen.wait(for: 3))
        try fixture.sync()
        #expect(seen.values == ["-1", "-2", "-3"])
        #expect(fixture.center.metrics.heldOverflow == 2)
        observation.remove()
    }

    @Test func coalesceIsBoundedByDistinctPairsAndCountsTheOverflow() throws {
        let fixture = try BusFixture(heldNotificationLimit: 2)
        defer { fixture.shutDown() }
        let seen = Collector<String>()
        let observation = try observe(fixture, "s.coalesce.bounded", .coalesce, into: seen)
        fixture.center.suspended = true
        try post(fixture, "s.coalesce.bounded", 1...1, object: "x")
        try post(fixture, "s.coalesce.bounded", 2...2, object: "y")
        try post(fixture, "s.coalesce.bounded", 3...3, object: "z") // a third pair: discarded
        try post(fixture, "s.coalesce.bounded", 4...4, object: "x") // replaces x1
        try fixture.sync()
        fixture.center.suspended = false
        #expect(seen.wait(for: 2))
        try fixture.sync()
        #expect(seen.values == ["y2", "x4"])
        #expect(fixture.center.metrics.heldOverflow == 1)
        #expect(fixture.center.metrics.coalesced == 1)
        observation.remove()
    }

    /// A handler that resumes the center, called inline while a notification is being handed out:
    /// the observations after it get that notification now, not held after the resume.
    @Test func aResumeFromAHandlerReachesTheObservationsAfterIt() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let center = fixture.center
        let resumer = try center.addObserver(forName: .init("s.resume"), suspensionBehavior: .deliverImmediately,
                                             on: fixture.thread.loop) { _ in center.suspended = false }
        for behavior in [BusSuspensionBehavior.hold, .drop, .coalesce] {
            let seen = Collector<String>()
            let later = try observe(fixture, "s.resume", behavior, into: seen)
            center.suspended = true
            try post(fixture, "s.resume", 1...1)
            #expect(seen.wait(for: 1), "\(behavior)")
            #expect(!center.suspended)
            later.remove()
        }
        #expect(center.metrics.droppedWhileSuspended == 0)
        resumer.remove()
    }

    @Test func deliverImmediatelyBehaviourIgnoresSuspension() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let seen = Collector<String>()
        let observation = try observe(fixture, "s.immediate", .deliverImmediately, into: seen)
        fixture.center.suspended = true
        try post(fixture, "s.immediate", 1...2)
        #expect(seen.wait(for: 2))
        #expect(seen.values == ["-1", "-2"])
        fixture.center.suspended = false
        observation.remove()
    }

    @Test func aPostWithDeliverImmediatelyOverridesAndKeepsOrder() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let seen = Collector<String>()
        let observation = try observe(fixture, "s.override", .hold, into: seen)
        fixture.center.suspended = true
        try post(fixture, "s.override", 1...1)
        try fixture.center.post(name: .init("s.override"), userInfo: ["n": 2], deliverImmediately: true)
        #expect(seen.wait(for: 2))
        #expect(seen.values == ["-1", "-2"])
        #expect(fixture.center.suspended)
        fixture.center.suspended = false
        observation.remove()
    }
}
