import Foundation
import PortRunLoopDBus
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Every property-list type a `Posted` signal's userInfo can carry, read from real signals on a
/// private bus: posted by the center, by `dbus-send` (basic types) and by `gdbus emit` (any D-Bus
/// type); and the signatures that are not notifications, still counted drops.
@Suite(.timeLimit(.minutes(1))) struct BusUserInfoDecodingTests {
    static let path = "/org/portrunloop/Notifications"
    static let member = "org.portrunloop.DistributedNotification.Posted"

    /// A received notification, handed from the loop thread to the test (`@unchecked Sendable`:
    /// its userInfo holds only decoded property-list values, read after the handler is done).
    struct Received: @unchecked Sendable {
        let note: Notification
    }

    /// What an observer of every name received.
    final class ReceivedNotes: Sendable {
        let notes = Collector<Received>()
        func note(_ name: String) -> Notification? { notes.values.first { $0.note.name.rawValue == name }?.note }
    }

    private func observeAll(_ fixture: BusFixture) throws -> (ReceivedNotes, BusObservation) {
        let received = ReceivedNotes()
        let observation = try fixture.center.addObserver(forName: nil, on: fixture.thread.loop) { received.notes.append(Received(note: $0)) }
        return (received, observation)
    }

    @Test func everyTypeTheCenterPostsArrivesAsPosted() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let (received, observation) = try observeAll(fixture)
        defer { observation.remove() }
        let userInfo: [AnyHashable: Any] = [
            "string": "text ü", "true": true, "false": false, "int": 42, "negative": -7,
            "int64Max": Int64.max, "uint64Max": UInt64.max, "double": 2.5, "float": Float(0.5),
            "data": Data([0, 1, 255]), "emptyData": Data(),
            "array": [1, "two", [3.0]] as [Any], "emptyArray": [Any](),
            "dictionary": ["a": 1, "b": ["c": "d"]] as [String: Any], "emptyDictionary": [String: Any](),
        ]
        try fixture.center.post(name: .init("all.types"), object: "obj", userInfo: userInfo)
        try fixture.center.post(name: .init("empty.userInfo"), userInfo: [:])
        try fixture.center.post(name: .init("nil.userInfo"), deliverImmediately: true)
        #expect(received.notes.wait(for: 3))
        let all = try #require(received.note("all.types"))
        #expect(all.object as? String == "obj")
        let info = try #require(all.userInfo)
        #expect(info.count == userInfo.count)
        #expect(info["string"] as? String == "text ü")
        #expect(info["true"] as? Bool == true)
        #expect(info["false"] as? Bool == false)
        #expect(info["int"] as? Int == 42)
        #expect(info["negative"] as? Int == -7)
        #expect(info["int64Max"] as? Int == Int.max)
        #expect(info["uint64Max"] as? UInt64 == UInt64.max)
        #expect(info["double"] as? Double == 2.5)
        #expect(info["float"] as? Double == 0.5)
        #expect(info["data"] as? Data == Data([0, 1, 255]))
        #expect(info["emptyData"] as? Data == Data())
        let array = try #require(info["array"] as? [Any])
        #expect(array.count == 3)
        #expect(array[0] as? Int == 1)
        #expect(array[1] as? String == "two")
        #expect((array[2] as? [Any])?.first as? Double == 3.0)
        #expect((info["emptyArray"] as? [Any])?.isEmpty == true)
        let dictionary = try #require(info["dictionary"] as? [String: Any])
        #expect(dictionary["a"] as? Int == 1)
        #expect((dictionary["b"] as? [String: Any])?["c"] as? String == "d")
        #expect((info["emptyDictionary"] as? [String: Any])?.isEmpty == true)
        // An empty userInfo travels as an empty a{sv} and arrives as nil, as none does.
        #expect(received.note("empty.userInfo")?.userInfo == nil)
        #expect(received.note("empty.userInfo")?.object == nil)
        #expect(received.note("nil.userInfo")?.userInfo == nil)
        #expect(fixture.center.metrics.malformedDropped == 0)
    }

    @Test func everyBasicTypeDbusSendPostsArrives() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let (received, observation) = try observeAll(fixture)
        defer { observation.remove() }
        // dbus-send's dictionaries take basic types: one signal (ssa{sX}) per type.
        let cases: [(type: String, text: String)] = [
            ("string", "v"), ("int16", "-3"), ("uint16", "65535"), ("int32", "-70000"), ("uint32", "4000000000"),
            ("int64", "-9000000000"), ("uint64", "18446744073709551615"), ("double", "1.5"), ("byte", "200"),
            ("boolean", "true"), ("objpath", "/a/b"),
        ]
        for (type, text) in cases {
            let result = try runTool("/usr/bin/dbus-send", ["--bus=\(fixture.bus.address)", "--type=signal", Self.path, Self.member,
                                                            "string:t.\(type)", "string:", "dict:string:\(type):k,\(text)"])
            #expect(result.status == 0, "\(result.output)")
        }
        #expect(received.notes.wait(for: cases.count))
        func value(_ type: String) -> Any? { received.note("t.\(type)")?.userInfo?["k"] }
        #expect(value("string") as? String == "v")
        #expect(value("int16") as? Int == -3)
        #expect(value("uint16") as? Int == 65535)
        #expect(value("int32") as? Int == -70000)
        #expect(value("uint32") as? Int == 4_000_000_000)
        #expect(value("int64") as? Int == -9_000_000_000)
        #expect(value("uint64") as? UInt64 == UInt64.max)
        #expect(value("double") as? Double == 1.5)
        #expect(value("byte") as? Int == 200)
        #expect(value("boolean") as? Bool == true)
        #expect(value("objpath") as? String == "/a/b")
        #expect(fixture.center.metrics.malformedDropped == 0)
    }

    /// `gdbus emit` on the private bus (it registers as a session-bus client there).
    private func emit(_ fixture: BusFixture, _ arguments: [String]) throws {
        let result = try runTool("/usr/bin/gdbus", ["emit", "--session", "--object-path", Self.path, "--signal", Self.member] + arguments,
                                 environment: ["DBUS_SESSION_BUS_ADDRESS": fixture.bus.address])
        #expect(result.status == 0, "\(result.output)")
    }

    @Test func containersAndOtherTypesGdbusPostsArrive() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let (received, observation) = try observeAll(fixture)
        defer { observation.remove() }
        try emit(fixture, ["'g.containers'", "'obj'", """
            {'struct': <(int32 1, 'x')>, 'intKeys': <{int32 3: 'three'}>, 'signature': <signature 'a{sv}'>, \
            'bytes': <[byte 0x61, 0x00, 0x62]>, 'strings': <['p', 'q']>, 'nested': <{'n': <int16 -2>}>, \
            'emptyNested': <@a{sv} {}>, 'variantInVariant': <<'deep'>>, 'emptyStrings': <@as []>}
            """, "true"])
        // ssa{sv} (no flag) and ss: the flag defaults to false, the userInfo to none.
        try emit(fixture, ["'g.noFlag'", "''", "{'k': <'v'>}"])
        try emit(fixture, ["'g.plain'", "''"])
        // A userInfo whose values are not variants (a{ss}).
        try emit(fixture, ["'g.strings'", "''", "{'k': 'v'}", "false"])
        #expect(received.notes.wait(for: 4))
        let note = try #require(received.note("g.containers"))
        #expect(note.object as? String == "obj")
        let info = try #require(note.userInfo)
        let structure = try #require(info["struct"] as? [Any])
        #expect(structure.count == 2 && structure[0] as? Int == 1 && structure[1] as? String == "x")
        let intKeys = try #require(info["intKeys"] as? [AnyHashable: Any])
        #expect(intKeys[AnyHashable(3)] as? String == "three")
        #expect(info["signature"] as? String == "a{sv}")
        #expect(info["bytes"] as? Data == Data([0x61, 0x00, 0x62]))
        let strings = try #require(info["strings"] as? [Any])
        #expect(strings.compactMap { $0 as? String } == ["p", "q"])
        #expect((info["nested"] as? [String: Any])?["n"] as? Int == -2)
        #expect((info["emptyNested"] as? [String: Any])?.isEmpty == true)
        #expect(info["variantInVariant"] as? String == "deep")
        #expect((info["emptyStrings"] as? [Any])?.isEmpty == true)
        #expect(received.note("g.noFlag")?.userInfo?["k"] as? String == "v")
        #expect(received.note("g.plain")?.userInfo == nil)
        #expect(received.note("g.strings")?.userInfo?["k"] as? String == "v")
        #expect(fixture.center.metrics.malformedDropped == 0)
    }

    @Test func otherSignaturesAndEmptyNamesAreCountedDrops() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let (received, observation) = try observeAll(fixture)
        defer { observation.remove() }
        let raw = Collector<String>()
        let rawObservation = try fixture.center.addSignalObserver(
            matching: BusMatchRule(path: Self.path, interface: "org.portrunloop.DistributedNotification", member: "Posted"),
            on: fixture.thread.loop) { raw.append($0.signature) }
        defer { rawObservation.remove() }
        try emit(fixture, ["'bad.twoFlags'", "''", "{'k': <1>}", "true", "false"])
        try emit(fixture, ["'bad.flagType'", "''", "{'k': <1>}", "int32 1"])
        try emit(fixture, ["'bad.keys'", "''", "{int32 1: <1>}"])
        try emit(fixture, ["'bad.objectPath'", "objectpath '/a'"])
        try emit(fixture, ["''", "''", "{'k': <1>}", "false"])
        try emit(fixture, ["'good.after'", "''"])
        #expect(raw.wait(for: 6))
        #expect(received.notes.wait(for: 1))
        #expect(Set(raw.values) == ["ssa{sv}bb", "ssa{sv}i", "ssa{iv}", "so", "ssa{sv}b", "ss"])
        #expect(fixture.center.metrics.malformedDropped == 5)
        let names = received.notes.values.map { $0.note.name.rawValue }
        #expect(names == ["good.after"])
    }
}
