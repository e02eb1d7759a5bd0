import Foundation
import PortRunLoopDBus
import PortRunLoopKit
import Testing

/// A match rule field holding a NUL is refused as an invalid rule (found by `fuzz-match-rule`).
/// The rule travels to the daemon as a C string and libdbus' validators read C strings: a NUL
/// cut the rule short there ("path='/orS" with its quote never closed) while the validators
/// passed the part before it.
@Suite(.timeLimit(.minutes(1)))
struct BusMatchRuleNULTests {
    /// The fields of the fuzzer's input (Tests/Fuzz/Corpus/fuzz-match-rule/crash-8ea1aa84…).
    static let found = BusMatchRule(sender: "org.freedesktop.DBus", path: "/orS\u{0}\u{0}\u{0}eedesstop/DBus",
                                    interface: "org.fr0edesktop.DBus", member: "NameOwnerChanged")

    @Test func aNULInAnyFieldIsAnInvalidRule() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let rules = [Self.found, BusMatchRule(sender: ":1.1\u{0}x"), BusMatchRule(path: "/a\u{0}"), BusMatchRule(interface: "a.b\u{0}c"),
                     BusMatchRule(member: "Foo\u{0}bar"), BusMatchRule(arg0: "x\u{0}")]
        for rule in rules {
            #expect {
                _ = try fixture.center.addSignalObserver(matching: rule, on: fixture.thread.loop) { _ in }
            } throws: { error in
                guard case BusNotificationError.invalidMatchRule(let why) = error else { return false }
                return why.contains("NUL")
            }
        }
        // The same fields without the NUL are a valid rule.
        let token = try fixture.center.addSignalObserver(matching: BusMatchRule(sender: "org.freedesktop.DBus", member: "NameOwnerChanged"),
                                                         on: fixture.thread.loop) { _ in }
        fixture.center.removeObserver(token)
    }
}
