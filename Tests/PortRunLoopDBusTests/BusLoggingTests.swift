import Foundation
import Logging
import PortRunLoopDBus
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// What the center logs: a dropped malformed notification (with its sender), a full `.hold`
/// observation (once per suspension), the loss of the bus (once); nothing per delivery.
@Suite(.timeLimit(.minutes(1))) struct BusLoggingTests {
    @Test func dropsOverflowsAndTheLossOfTheBusAreLoggedOnce() throws {
        let recorder = LogRecorder()
        let fixture = try BusFixture(heldNotificationLimit: 1, logger: recorder.logger)
        defer { fixture.shutDown() }
        let raw = Collector<String>()
        let rawObservation = try fixture.center.addSignalObserver(
            matching: BusMatchRule(interface: "org.portrunloop.DistributedNotification", member: "Posted"),
            on: fixture.thread.loop) { raw.append($0.sender) }
        let held = Collector<Int>()
        let observation = try fixture.center.addObserver(forName: .init("log.hold"), suspensionBehavior: .hold,
                                                         on: fixture.thread.loop) { _ in held.append(1) }
        let before = recorder.entries.count
        // Deliveries log nothing.
        try fixture.center.post(name: .init("log.hold"))
        #expect(held.wait(for: 1))
        #expect(recorder.entries.count == before)
        // A malformed Posted signal: one warning naming its sender.
        let sent = try runTool("/usr/bin/dbus-send", ["--bus=\(fixture.bus.address)", "--type=signal",
                                                      "/org/portrunloop/Notifications", "org.portrunloop.DistributedNotification.Posted", "int32:1"])
        #expect(sent.status == 0)
        #expect(raw.wait(for: 2)) // our post, then the dbus-send one (seen after it was classified)
        // Three over a limit of one: one warning.
        fixture.center.suspended = true
        for _ in 0..<3 { try fixture.center.post(name: .init("log.hold")) }
        try fixture.sync()
        fixture.center.suspended = false
        #expect(held.wait(for: 2))
        fixture.bus.kill()
        let lost = Collector<Int>()
        let disconnection = fixture.center.addDisconnectionObserver(on: fixture.thread.loop) { _ in lost.append(1) }
        #expect(lost.wait(for: 1, seconds: 10))
        let entries = recorder.entries
        let malformed = entries.filter { $0.message.contains("malformed") }
        #expect(malformed.count == 1)
        #expect(malformed.first?.level == .warning)
        #expect(malformed.first?["portrunloop.bus.sender"]?.hasPrefix(":") == true)
        #expect(entries.filter { $0.message.contains("held observation is full") }.count == 1)
        #expect(entries.filter { $0.message.contains("lost its bus connection") && $0.level == .error }.count == 1)
        #expect(fixture.center.metrics.heldOverflow == 2)
        observation.remove(); rawObservation.remove(); disconnection.remove()
    }
}
