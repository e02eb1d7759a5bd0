import Foundation
import PortRunLoopDBus
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A userInfo nested deeper than D-Bus carries is a typed error at the post, and the center's
/// connection stays up (found by `fuzz-property-list`: libdbus wrote a signal whose containers
/// nested past 64, which a peer's libdbus and the daemon refuse as corrupted; the daemon drops
/// the sender's connection for it). 30 nested arrays (61 containers with the `a{sv}` around
/// them and each value's variant) arrive; 31 do not fit.
@Suite(.timeLimit(.minutes(1)))
struct BusUserInfoNestingTests {
    static func nested(_ depth: Int) -> Any {
        var value: Any = true
        for _ in 0..<depth { value = [value] }
        return value
    }

    static func nestedField(_ depth: Int) -> BusFieldValue {
        var value = BusFieldValue.bool(true)
        for _ in 0..<depth { value = .array([value]) }
        return value
    }

    @Test func aUserInfoNestedBeyondWhatDBusCarriesIsATypedErrorAndTheConnectionStays() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let arrived = Collector<Int>()
        let observation = try fixture.center.addObserver(forName: .init("deep"), suspensionBehavior: .deliverImmediately,
                                                         on: fixture.thread.loop) { _ in arrived.append(1) }
        defer { observation.remove() }
        try fixture.center.post(name: .init("deep"), userInfo: ["a": Self.nested(30)], deliverImmediately: true)
        try fixture.center.post(name: .init("deep"), fields: ["a": Self.nestedField(30)], deliverImmediately: true)
        #expect(arrived.wait(for: 2))
        for post in [{ try fixture.center.post(name: .init("deep"), userInfo: ["a": Self.nested(31)]) },
                     { try fixture.center.post(name: .init("deep"), fields: ["a": Self.nestedField(31)]) }] {
            #expect {
                try post()
            } throws: { error in
                guard case BusNotificationError.unsupportedUserInfoValue(let keyPath, let type) = error else { return false }
                return keyPath.hasPrefix("a") && type.contains("nested deeper")
            }
        }
        // The connection is still up: a round trip goes through.
        try fixture.sync()
        #expect(arrived.values.count == 2)
    }
}
