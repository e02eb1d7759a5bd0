import Foundation
import PortRunLoopDBus
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Any D-Bus signal, observed by match rule, with its arguments typed.
@Suite(.timeLimit(.minutes(1))) struct BusSignalObserverTests {
    @Test func nameOwnerChangedArrivesTypedOnTheChosenThread() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let deliveryThread = try RunLoopThread(name: "signal-delivery")
        defer { deliveryThread.stop() }
        let seen = Collector<BusSignal>()
        let onThread = Collector<Bool>()
        let rule = BusMatchRule(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged")
        let observation = try fixture.center.addSignalObserver(matching: rule, on: deliveryThread.loop) { signal in
            onThread.append(deliveryThread.loop.isCurrentThread)
            seen.append(signal)
        }
        let second = try fixture.secondCenter()
        let name = try #require(second.uniqueName)
        #expect(seen.wait(for: 1))
        let signal = try #require(seen.values.first { $0.arguments.first == .string(name) })
        #expect(signal.sender == "org.freedesktop.DBus")
        #expect(signal.signature == "sss")
        #expect(signal.arguments == [.string(name), .string(""), .string(name)])
        #expect(onThread.values.allSatisfy { $0 })
        second.close()
        observation.remove()
    }

    @Test func arg0AndMemberFilterAndArgumentsAreTyped() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let seen = Collector<BusSignal>()
        let observation = try fixture.center.addSignalObserver(
            matching: BusMatchRule(path: "/org/example/Test", interface: "org.example.Test", member: "Ping", arg0: "wanted"),
            on: fixture.thread.loop) { seen.append($0) }
        let send = { (arguments: [String]) throws in
            let result = try runTool("/usr/bin/dbus-send", ["--bus=\(fixture.bus.address)", "--type=signal", "/org/example/Test"] + arguments)
            #expect(result.status == 0, "\(result.output)")
        }
        try send(["org.example.Test.Ping", "string:other"])
        try send(["org.example.Test.Pong", "string:wanted"])
        try send(["org.example.Test.Ping", "string:wanted", "int32:-7", "uint64:18446744073709551615", "double:1.5",
                  "boolean:true", "objpath:/a/b", "array:string:x,y", "dict:string:int32:k,3", "variant:byte:9"])
        #expect(seen.wait(for: 1))
        // The unwanted ones came first from their senders; one more round trip shows none arrived.
        try fixture.sync()
        #expect(seen.values.count == 1)
        let signal = try #require(seen.values.first)
        #expect(signal.member == "Ping")
        #expect(signal.signature == "sitdboasa{si}v")
        #expect(signal.arguments == [
            .string("wanted"), .int32(-7), .uint64(.max), .double(1.5), .bool(true), .objectPath("/a/b"),
            .array(elementSignature: "s", [.string("x"), .string("y")]),
            .dictionary(keySignature: "s", valueSignature: "i", [BusDictionaryEntry(key: .string("k"), value: .int32(3))]),
            .variant(.byte(9)),
        ])
        observation.remove()
    }

    @Test func aNotificationReachesARawSignalObserverAsATypedSignalAndNotificationsGoOnWithoutOne() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let notes = Collector<String>()
        let notifications = try fixture.center.addObserver(forName: nil, on: fixture.thread.loop) { notes.append($0.name.rawValue) }
        defer { notifications.remove() }
        let seen = Collector<BusSignal>()
        let raw = try fixture.center.addSignalObserver(
            matching: BusMatchRule(path: "/org/portrunloop/Notifications", interface: "org.portrunloop.DistributedNotification",
                                   member: "Posted"),
            on: fixture.thread.loop) { seen.append($0) }
        try fixture.center.post(name: .init("raw.one"), object: "obj", userInfo: ["k": 5, "a": "b"], deliverImmediately: true)
        #expect(seen.wait(for: 1))
        #expect(notes.wait(for: 1))
        let signal = try #require(seen.values.first)
        #expect(signal.sender == fixture.center.uniqueName)
        #expect(signal.signature == "ssa{sv}b")
        #expect(signal.arguments == [
            .string("raw.one"), .string("obj"),
            .dictionary(keySignature: "s", valueSignature: "v", [
                BusDictionaryEntry(key: .string("a"), value: .variant(.string("b"))),
                BusDictionaryEntry(key: .string("k"), value: .variant(.int64(5))),
            ]),
            .bool(true),
        ])
        // Without a raw observer no signal is made; notifications still arrive.
        raw.remove()
        try fixture.center.post(name: .init("raw.two"))
        #expect(notes.wait(for: 2))
        #expect(notes.values == ["raw.one", "raw.two"])
        #expect(seen.values.count == 1)
    }
}
