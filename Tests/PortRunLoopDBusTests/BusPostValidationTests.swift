import Foundation
import PortRunLoopDBus
import PortRunLoopKit
import Testing

/// Bad input is a typed error at the call, and nothing is sent.
@Suite(.timeLimit(.minutes(1))) struct BusPostValidationTests {
    @Test func invalidNamesAndObjectsAreTypedErrors() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        #expect(throws: BusNotificationError.invalidName("empty")) { try fixture.center.post(name: .init("")) }
        #expect(throws: BusNotificationError.invalidName("contains NUL")) { try fixture.center.post(name: .init("a\u{0}b")) }
        #expect(throws: BusNotificationError.invalidObject("contains NUL")) { try fixture.center.post(name: .init("ok"), object: "x\u{0}") }
        let long = String(repeating: "n", count: BusNotificationCenter.maximumNameLength + 1)
        #expect(throws: BusNotificationError.self) { try fixture.center.post(name: .init(long)) }
        #expect(throws: BusNotificationError.invalidName("empty")) {
            _ = try fixture.center.addObserver(forName: .init(""), on: fixture.thread.loop) { _ in }
        }
        #expect(fixture.center.metrics.posted == 0)
    }

    @Test func nonPropertyListUserInfoIsATypedError() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        #expect(throws: BusNotificationError.unsupportedUserInfoValue(keyPath: "when", type: "Date")) {
            try fixture.center.post(name: .init("bad"), userInfo: ["when": Date()])
        }
        #expect(throws: BusNotificationError.unsupportedUserInfoValue(keyPath: "outer.url", type: "URL")) {
            try fixture.center.post(name: .init("bad"), userInfo: ["outer": ["url": URL(fileURLWithPath: "/")]])
        }
        #expect(throws: BusNotificationError.unsupportedUserInfoValue(keyPath: "list[1]", type: "UUID")) {
            try fixture.center.post(name: .init("bad"), userInfo: ["list": [1, UUID()]])
        }
        #expect(throws: BusNotificationError.self) { try fixture.center.post(name: .init("bad"), userInfo: [1: "int key"]) }
        #expect(fixture.center.metrics.posted == 0)
    }

    /// A D-Bus string cannot carry NUL: a userInfo string or key with one is refused at the call,
    /// never cut short on the way.
    @Test func aUserInfoStringWithNULIsATypedError() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let nul = BusNotificationError.unsupportedUserInfoValue(keyPath: "k", type: "String containing NUL (a D-Bus string cannot carry it)")
        #expect(throws: nul) { try fixture.center.post(name: .init("bad"), userInfo: ["k": "abc\u{0}def"]) }
        #expect(throws: BusNotificationError.unsupportedUserInfoValue(keyPath: "outer.k", type: "String containing NUL (a D-Bus string cannot carry it)")) {
            try fixture.center.post(name: .init("bad"), userInfo: ["outer": ["k": "x\u{0}"]])
        }
        #expect(throws: BusNotificationError.self) { try fixture.center.post(name: .init("bad"), userInfo: ["a\u{0}x": 1]) }
        #expect(throws: nul) { try fixture.center.post(name: .init("bad"), fields: ["k": .string("abc\u{0}def")]) }
        #expect(fixture.center.metrics.posted == 0)
    }

    @Test func anUnreachableBusIsATypedError() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-bus-\(UUID().uuidString)").path
        let thread = try RunLoopThread(name: "unreachable")
        defer { thread.stop() }
        #expect {
            _ = try BusNotificationCenter(endpoint: .dbus(address: "unix:path=\(missing)"), loop: thread.loop)
        } throws: { error in
            guard case BusNotificationError.connectionFailed = error else { return false }
            return true
        }
        #expect(throws: BusNotificationError.self) {
            _ = try BusNotificationCenter(endpoint: .dbus(address: "not an address"), loop: thread.loop)
        }
    }

    @Test func invalidMatchRulesAreTypedErrors() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        for rule in [BusMatchRule(path: "no-slash"), BusMatchRule(interface: "nodots"), BusMatchRule(member: "has.dot"),
                     BusMatchRule(sender: "bad..name")] {
            #expect {
                _ = try fixture.center.addSignalObserver(matching: rule, on: fixture.thread.loop) { _ in }
            } throws: { error in
                guard case BusNotificationError.invalidMatchRule = error else { return false }
                return true
            }
        }
    }
}
