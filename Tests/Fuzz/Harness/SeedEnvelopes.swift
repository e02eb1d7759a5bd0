import Foundation
import PortRunLoopBus

/// The notifications the seed corpora are made of (written by each transport's own writer):
/// every userInfo value type, nesting, empty containers, non-ASCII text, extreme numbers.
///
/// Thread-safety: a stateless namespace.
package enum SeedEnvelopes {
    /// The fixed seeds: every value type, nesting, empties, non-ASCII text, extreme numbers.
    package static func all(name: String) -> [NotificationEnvelope] {
        let nested: [String: Any] = ["inner": ["list": [1, "two", 3.5] as [Any], "flag": false] as [String: Any]]
        let userInfos: [[AnyHashable: Any]?] = [
            nil,
            [:],
            ["count": 3, "name": "doc-7", "ratio": 0.25, "on": true],
            ["bytes": Data([0, 1, 2, 0xFF]), "empty": Data(), "list": [] as [Any], "map": [:] as [String: Any]],
            ["min": Int.min, "max": Int.max, "big": UInt64.max, "nan": Double.nan, "inf": -Double.infinity, "zero": -0.0],
            ["text": "grüße ✓ \u{1F600}", "": "empty key", "nested": nested],
        ]
        var envelopes: [NotificationEnvelope] = []
        for (index, userInfo) in userInfos.enumerated() {
            // As fields: written in their (sorted) order, so a seed's bytes are the same in every
            // process (a property list's order is its hashing's).
            envelopes.append(NotificationEnvelope(name: name, object: index % 2 == 0 ? nil : "object-\(index)",
                                                  fields: userInfo.map { BusFields(decodedPropertyList: $0) },
                                                  deliverImmediately: index % 3 == 0))
        }
        envelopes.append(NotificationEnvelope(name: name, object: "o", fields: ["a": 1, "b": .array([.string("x"), .data(Data([9]))])],
                                              deliverImmediately: false))
        return envelopes
    }

    /// A notification named `name` whose object, flag and userInfo come from `generator`
    /// (userInfo built as ``PropertyListHarness`` builds one from bytes, posted as fields: every
    /// value has a form to post; a dictionary keyed by something else than strings is its keys and
    /// values alternating).
    package static func random(name: String, using generator: inout some RandomNumberGenerator) -> NotificationEnvelope {
        let bytes = (0..<Int.random(in: 0...160, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let userInfo = PropertyListHarness.userInfo(from: bytes).flatMap { $0.isEmpty ? nil : $0 }
        let object = Bool.random(using: &generator) ? "object-\(UInt8.random(in: 0...255, using: &generator))" : nil
        return NotificationEnvelope(name: name, object: object, fields: userInfo.map { BusFields(decodedPropertyList: $0) },
                                    deliverImmediately: Bool.random(using: &generator))
    }
}
