import Foundation
import PortRunLoopBus
import PortRunLoopDBus
import PortRunLoopFuzzSupport

/// `fuzz-match-rule`: the D-Bus match rules a center asks the daemon for (``BusMatchRule``). The
/// input gives the rule's fields (each present or not, any text).
///
/// The check: ``BusMatchRule/validate()`` accepts or throws ``BusNotificationError/invalidMatchRule(_:)``;
/// an accepted rule's text, as libdbus sends it (a C string), reads back (by the match-rule
/// syntax dbus-daemon parses) to exactly its fields; and the rule matches a signal that has
/// those fields and refuses one that differs in a field it names.
package enum MatchRuleHarness: FuzzHarness {
    package static let targetName = "fuzz-match-rule"

    package static func run(_ bytes: UnsafeRawBufferPointer) throws(InvariantViolation) {
        var input = FuzzInput(bytes)
        let present = input.byte()
        func field(_ bit: UInt8) -> String? {
            let text = input.string(upTo: 64)
            return present & bit != 0 ? text : nil
        }
        let rule = BusMatchRule(sender: field(1), path: field(2), interface: field(4), member: field(8), arg0: field(16))
        do throws(BusNotificationError) {
            try rule.validate()
        } catch {
            guard case .invalidMatchRule = error else { throw InvariantViolation("validate threw \(error)") }
            return
        }
        // What the daemon receives: the text up to its first NUL.
        let sent = rule.ruleString.withCString { String(cString: $0) }
        guard let parsed = parse(sent) else { throw InvariantViolation("the rule \(sent.debugDescription) does not parse") }
        let expected: [String: String] = ["type": "signal", "sender": rule.sender, "path": rule.path, "interface": rule.interface,
                                          "member": rule.member, "arg0": rule.arg0].compactMapValues { $0 }
        try require(parsed == expected, "the rule \(sent.debugDescription) reads back as \(parsed), not \(expected)")
        let signal = BusSignal(sender: rule.sender ?? ":1.1", path: rule.path ?? "/", interface: rule.interface ?? "a.b",
                               member: rule.member ?? "M", signature: "s", arguments: [.string(rule.arg0 ?? "")])
        try require(rule.matches(signal), "\(rule) does not match a signal with its fields")
        if let member = rule.member {
            var other = signal
            other.member = member + "X"
            try require(!rule.matches(other), "\(rule) matches member \(other.member)")
        }
        if let arg0 = rule.arg0 {
            var other = signal
            other.arguments = [.string(arg0 + "X")]
            try require(!rule.matches(other), "\(rule) matches arg0 \(arg0)X")
        }
    }

    /// A match rule's fields, read as dbus-daemon reads them (byte by byte: here scalar by
    /// scalar, never by characters, in which a quote and a combining mark after it are one):
    /// `key='value'` pairs separated by commas; inside quotes every scalar is itself, outside
    /// them `\'` is a quote. Nil when the text is not that (a key without `=`, an unclosed quote,
    /// a key twice).
    static func parse(_ text: String) -> [String: String]? {
        var fields: [String: String] = [:]
        var characters = Array(text.unicodeScalars)[...]
        while !characters.isEmpty {
            guard let equals = characters.firstIndex(of: "=") else { return nil }
            var key = ""
            key.unicodeScalars.append(contentsOf: characters[..<equals])
            characters = characters[(equals + 1)...]
            var value = String.UnicodeScalarView()
            var quoted = false
            while let next = characters.first {
                if next == "," && !quoted { break }
                characters = characters.dropFirst()
                if next == "'" {
                    quoted.toggle()
                } else if next == "\\" && !quoted && characters.first == "'" {
                    value.append("'")
                    characters = characters.dropFirst()
                } else {
                    value.append(next)
                }
            }
            guard !quoted, !key.isEmpty, fields[key] == nil else { return nil }
            fields[key] = String(value)
            if characters.first == "," {
                characters = characters.dropFirst()
                guard !characters.isEmpty else { return nil }
            }
        }
        return fields
    }

    package static func seeds() -> [FuzzSeed] {
        func seed(_ name: String, _ fields: [String?]) -> FuzzSeed {
            var present: UInt8 = 0
            var bytes: [UInt8] = []
            for (index, field) in fields.enumerated() {
                if field != nil { present |= 1 << index }
                let utf8 = Array((field ?? "").utf8.prefix(64))
                bytes += [UInt8(utf8.count)] + utf8
            }
            return FuzzSeed(name, [present] + bytes)
        }
        return [
            seed("name-owner-changed", ["org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged", nil]),
            seed("unique-sender-arg0", [":1.42", nil, nil, "Posted", "com.example.it's"]),
            seed("quotes", [nil, "/a/b", "a.b", "Member", "'quoted' \\ back,slash=x"]),
            seed("invalid-path", [nil, "no-slash", nil, nil, nil]),
            seed("nul-in-arg0", [nil, nil, nil, nil, "a\u{0}b"]),
            seed("empty", [nil, nil, nil, nil, nil]),
        ]
    }
}
