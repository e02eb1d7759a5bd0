import Foundation
import PortRunLoopDBus
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Notifications posted and observed as ``BusFields`` through a private dbus-daemon: the same
/// notification for observers of either form, the same signal for other programs, the chosen
/// thread, and suspension.
@Suite(.timeLimit(.minutes(1))) struct BusFieldsRoundTripTests {
    static let allTypes: BusFields = [
        "text": "héllo", "int": -42, "big": .unsignedInt(UInt64.max), "double": 2.5, "flag": true,
        "data": .data(Data([0, 1, 2, 255])), "list": ["a", 1], "nested": ["inner": 7],
    ]

    @Test func fieldsArriveAsPostedOnTheChosenThreadAndAsAPropertyListForOtherObservers() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let delivery = try RunLoopThread(name: "bus-fields")
        defer { delivery.stop() }
        let typed = Collector<BusNotification>()
        let onThread = Collector<Bool>()
        let plain = Collector<String>()
        let a = try fixture.center.addFieldsObserver(forName: .init("fields.trip"), on: delivery.loop) { note in
            onThread.append(delivery.loop.isCurrentThread)
            typed.append(note)
        }
        let b = try fixture.center.addObserver(forName: .init("fields.trip"), on: fixture.thread.loop) { note in
            let info = note.userInfo ?? [:]
            plain.append("\(info["text"] as? String ?? "?") \(info["int"] as? Int ?? 0) \(info["big"] as? UInt64 ?? 0) "
                + "\(info["double"] as? Double ?? 0) \(info["flag"] as? Bool ?? false) \((info["data"] as? Data)?.count ?? -1) "
                + "\((info["list"] as? [Any])?.count ?? -1) \((info["nested"] as? [String: Any])?["inner"] as? Int ?? 0)")
        }
        try fixture.center.post(name: .init("fields.trip"), object: "sender-1", fields: Self.allTypes)
        #expect(typed.wait(for: 1))
        #expect(plain.wait(for: 1))
        #expect(typed.values.first == BusNotification(name: .init("fields.trip"), object: "sender-1", fields: Self.allTypes))
        #expect(onThread.values == [true])
        #expect(plain.values == ["héllo -42 \(UInt64.max) 2.5 true 4 2 7"])
        a.remove(); b.remove()
    }

    /// Containers larger than the reader's initial room (a userInfo of 100 entries, a list of 50, a
    /// dictionary of 20 inside, a list of lists) arrive whole and in order, in both forms.
    @Test func largeContainersArriveWhole() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        var fields = BusFields()
        for index in 0..<100 { fields["key\(index)"] = .int(index) }
        fields["list"] = .array((0..<50).map { .int($0) })
        var inner = BusFields()
        for index in 0..<20 { inner["inner\(index)"] = .string("value \(index)") }
        fields["dictionary"] = .dictionary(inner)
        fields["lists"] = .array((0..<6).map { row in .array((0..<6).map { .int(row * 6 + $0) }) })
        let typed = Collector<BusFields>()
        let plain = Collector<Int>()
        let a = try fixture.center.addFieldsObserver(forName: .init("fields.large"), on: fixture.thread.loop) { typed.append($0.fields) }
        let b = try fixture.center.addObserver(forName: .init("fields.large"), on: fixture.thread.loop) { note in
            let info = note.userInfo ?? [:]
            plain.append(info.count + ((info["list"] as? [Any])?.count ?? 0) + ((info["dictionary"] as? [String: Any])?.count ?? 0))
        }
        try fixture.center.post(name: .init("fields.large"), fields: fields)
        #expect(typed.wait(for: 1))
        #expect(plain.wait(for: 1))
        #expect(typed.values == [fields])
        #expect(plain.values == [103 + 50 + 20])
        a.remove(); b.remove()
    }

    @Test func aPropertyListPostArrivesAsFields() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let typed = Collector<BusNotification>()
        let observation = try fixture.center.addFieldsObserver(forName: .init("dictionary.post"), on: fixture.thread.loop) {
            typed.append($0)
        }
        try fixture.center.post(name: .init("dictionary.post"), userInfo: [
            "text": "héllo", "int": -42, "big": UInt64.max, "double": 2.5, "flag": true,
            "data": Data([0, 1, 2, 255]), "list": ["a", 1], "nested": ["inner": 7],
        ])
        try fixture.center.post(name: .init("dictionary.post"), object: "bare")
        #expect(typed.wait(for: 2))
        #expect(typed.values.first?.fields == Self.allTypes)
        #expect(typed.values.last == BusNotification(name: .init("dictionary.post"), object: "bare"))
        observation.remove()
    }

    /// What another program sees: the documented signature, the fields in their order.
    @Test func dbusMonitorSeesFieldsAsTheDocumentedSignal() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let flat = try fixture.monitoredOutput(posting: { attempt in
            try fixture.center.post(name: .init("fields.wire"), object: "obj", fields: ["z": 5, "attempt": .int(attempt)])
        }, until: "string \"fields.wire\"") ?? ""
        #expect(flat.contains("member=Posted string \"fields.wire\" string \"obj\" array [ dict entry( string \"z\" variant int64 5 ) dict entry( string \"attempt\" variant int64"), "\(flat)")
    }

    /// Another program's signal with a dictionary keyed by integers: a fields observer gets its
    /// keys and values alternating, an observer of `Notification`s the dictionary itself.
    @Test func aForeignKeyedDictionaryReachesBothForms() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let typed = Collector<BusFieldValue?>()
        let plain = Collector<String>()
        let a = try fixture.center.addFieldsObserver(forName: .init("foreign.keys"), on: fixture.thread.loop) {
            typed.append($0.fields["map"])
        }
        let b = try fixture.center.addObserver(forName: .init("foreign.keys"), on: fixture.thread.loop) { note in
            let map = note.userInfo?["map"] as? [AnyHashable: Any]
            plain.append("\(map?[AnyHashable(3)] as? String ?? "?")")
        }
        let result = try runTool("/usr/bin/gdbus", ["emit", "--session", "--object-path", BusUserInfoDecodingTests.path,
                                                    "--signal", BusUserInfoDecodingTests.member,
                                                    "'foreign.keys'", "''", "{'map': <{int32 3: 'three', 4: 'four'}>}"],
                                 environment: ["DBUS_SESSION_BUS_ADDRESS": fixture.bus.address])
        #expect(result.status == 0, "\(result.output)")
        #expect(typed.wait(for: 1))
        #expect(plain.wait(for: 1))
        #expect(typed.values == [[3, "three", 4, "four"]])
        #expect(plain.values == ["three"])
        a.remove(); b.remove()
    }

    @Test func aHoldingFieldsObservationGetsWhatWasHeldInOrderOnResume() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let seen = Collector<Int>()
        let observation = try fixture.center.addFieldsObserver(forName: .init("fields.hold"), suspensionBehavior: .hold,
                                                               on: fixture.thread.loop) { note in
            seen.append(note.fields["seq"]?.intValue ?? -1)
        }
        fixture.center.suspended = true
        for seq in 0..<5 { try fixture.center.post(name: .init("fields.hold"), fields: ["seq": .int(seq)]) }
        try fixture.sync()
        #expect(seen.values.isEmpty)
        fixture.center.suspended = false
        try fixture.center.post(name: .init("fields.hold"), fields: ["seq": 5])
        #expect(seen.wait(for: 6))
        #expect(seen.values == [0, 1, 2, 3, 4, 5])
        observation.remove()
    }
}
