import Foundation
import PortRunLoopDBus
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Closing a center (explicitly, from its own handler, or by releasing it) leaves the bus: the
/// daemon reports its name gone, its observations end, later calls throw.
@Suite(.timeLimit(.minutes(1))) struct BusCloseTests {
    /// Collects the unique names the daemon reports gone (NameOwnerChanged with no new owner).
    private func watchNamesLeaving(_ fixture: BusFixture) throws -> (BusObservation, Collector<String>) {
        let gone = Collector<String>()
        let observation = try fixture.center.addSignalObserver(
            matching: BusMatchRule(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged"),
            on: fixture.thread.loop) { signal in
            if signal.arguments.count == 3, signal.arguments[2] == .string(""), case .string(let name) = signal.arguments[0] {
                gone.append(name)
            }
        }
        return (observation, gone)
    }

    @Test func closeLeavesTheBusAndLaterCallsThrow() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let (watch, gone) = try watchNamesLeaving(fixture)
        let second = try fixture.secondCenter()
        let name = try #require(second.uniqueName)
        let observation = try second.addObserver(forName: .init("closing"), on: fixture.thread.loop) { _ in }
        second.close()
        #expect(gone.wait(for: 1))
        #expect(gone.values == [name])
        #expect(!second.isConnected)
        #expect(!observation.isActive)
        #expect(throws: BusNotificationError.disconnected) { try second.post(name: .init("closing")) }
        watch.remove()
    }

    @Test func releasingTheCenterClosesItsConnection() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let (watch, gone) = try watchNamesLeaving(fixture)
        var second: BusNotificationCenter? = try fixture.secondCenter()
        let name = try #require(second?.uniqueName)
        second = nil
        #expect(gone.wait(for: 1))
        #expect(gone.values == [name])
        watch.remove()
    }

    @Test func aHandlerMayCloseItsOwnCenter() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let (watch, gone) = try watchNamesLeaving(fixture)
        let second = try fixture.secondCenter()
        let name = try #require(second.uniqueName)
        let calls = Collector<Int>()
        let observation = try second.addObserver(forName: .init("close.me"), on: fixture.thread.loop) { _ in
            calls.append(1)
            second.close()
        }
        try second.post(name: .init("close.me"))
        // Either sent before the handler closed the center (then never delivered) or refused.
        do { try second.post(name: .init("close.me")) } catch { #expect(error == .disconnected) }
        #expect(gone.wait(for: 1))
        #expect(gone.values == [name])
        try fixture.sync()
        #expect(calls.values.count == 1)
        #expect(!observation.isActive)
        watch.remove()
    }
}
