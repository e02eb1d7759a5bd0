import Foundation
import PortRunLoopDBus
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// The documented wire format, checked with the reference tools: `dbus-send` posts to our
/// observers, `dbus-monitor` sees what we post, and a `Posted` signal with another signature is a
/// counted drop.
@Suite(.timeLimit(.minutes(1))) struct BusWireFormatTests {
    static let path = "/org/portrunloop/Notifications"
    static let member = "org.portrunloop.DistributedNotification.Posted"

    @Test func aSignalSentByDbusSendReachesAnObserver() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let seen = Collector<String>()
        let observation = try fixture.center.addObserver(forName: .init("from.dbus-send"), on: fixture.thread.loop) { note in
            seen.append("\(note.object as? String ?? "nil") \(note.userInfo?["k"] as? String ?? "?")")
        }
        let plain = try runTool("/usr/bin/dbus-send", ["--bus=\(fixture.bus.address)", "--type=signal", Self.path, Self.member,
                                                       "string:from.dbus-send", "string:"])
        #expect(plain.status == 0, "\(plain.output)")
        let withInfo = try runTool("/usr/bin/dbus-send", ["--bus=\(fixture.bus.address)", "--type=signal", Self.path, Self.member,
                                                          "string:from.dbus-send", "string:obj", "dict:string:string:k,v"])
        #expect(withInfo.status == 0, "\(withInfo.output)")
        #expect(seen.wait(for: 2))
        #expect(Set(seen.values) == ["nil ?", "obj v"])
        observation.remove()
    }

    @Test func dbusMonitorSeesOurSignalWithTheDocumentedSignature() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let flat = try fixture.monitoredOutput(posting: { attempt in
            try fixture.center.post(name: .init("wire.check"), object: "obj", userInfo: ["k": 5, "attempt": attempt])
        }, until: "string \"wire.check\"") ?? ""
        #expect(flat.contains("path=/org/portrunloop/Notifications; interface=org.portrunloop.DistributedNotification; member=Posted"))
        #expect(flat.contains("sender=\(fixture.center.uniqueName ?? "?")"))
        // ssa{sv}b: two strings, an array of dict entries with string keys and variant values, a boolean.
        #expect(flat.contains("member=Posted string \"wire.check\" string \"obj\" array [ dict entry( string \"attempt\" variant int64"), "\(flat)")
        #expect(flat.contains("dict entry( string \"k\" variant int64 5 ) ] boolean false"), "\(flat)")
    }

    @Test func aPostedSignalWithTheWrongSignatureIsACountedDrop() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let notes = Collector<String>()
        let raw = Collector<String>()
        let observation = try fixture.center.addObserver(forName: nil, on: fixture.thread.loop) { note in
            notes.append(note.name.rawValue)
        }
        // Sees every Posted signal, after the center has classified it.
        let rawObservation = try fixture.center.addSignalObserver(
            matching: BusMatchRule(path: Self.path, interface: "org.portrunloop.DistributedNotification", member: "Posted"),
            on: fixture.thread.loop) { signal in raw.append(signal.signature) }
        for arguments in [["int32:5"], ["string:name", "int32:5"], ["string:", "string:obj"], ["string:ok", "string:", "dict:int32:string:1,v"]] {
            let result = try runTool("/usr/bin/dbus-send", ["--bus=\(fixture.bus.address)", "--type=signal", Self.path, Self.member] + arguments)
            #expect(result.status == 0, "\(result.output)")
        }
        #expect(raw.wait(for: 4))
        #expect(raw.values.sorted() == ["i", "si", "ss", "ssa{is}"])
        #expect(fixture.center.metrics.malformedDropped == 4)
        #expect(notes.values.isEmpty)
        #expect(fixture.center.isConnected)
        observation.remove(); rawObservation.remove()
    }
}
