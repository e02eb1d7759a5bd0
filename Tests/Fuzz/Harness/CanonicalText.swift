import Foundation
import PortRunLoopBus

/// One text for a decoded value that two decodings (or a decoding and a round trip) must agree
/// on: dictionaries by sorted keys, doubles by value with every NaN alike, integers and unsigned
/// integers apart.
///
/// Thread-safety: a stateless namespace.
enum CanonicalText {
    /// The text of a property-list value (as `PropertyListCoding` and the readers make them).
    static func of(_ value: Any) -> String {
        switch value {
        case let v as String: return "s" + v.debugDescription
        case let v as Bool: return v ? "T" : "F"
        case let v as Int: return "i\(v)"
        case let v as UInt64: return "u\(v)"
        case let v as Double: return v.isNaN ? "dnan" : "d\(v)"
        case let v as Data: return "x" + v.map { String($0, radix: 16) }.joined(separator: ".")
        case let v as [Any]: return "[" + v.map(of).joined(separator: ",") + "]"
        case let v as [String: Any]: return map(v.map { (AnyHashable($0.key), $0.value) })
        case let v as [AnyHashable: Any]: return map(v.map { ($0.key, $0.value) })
        default: return "?\(type(of: value))"
        }
    }

    private static func map(_ entries: [(AnyHashable, Any)]) -> String {
        "{" + entries.map { of($0.0.base) + ":" + of($0.1) }.sorted().joined(separator: ",") + "}"
    }

    /// The text of a userInfo (nil: none).
    static func of(userInfo: [AnyHashable: Any]?) -> String {
        userInfo.map { of($0) } ?? "-"
    }

    /// The text of fields (nil: none), by their property list.
    static func of(fields: BusFields?) -> String {
        fields.map { of($0.propertyList) } ?? "-"
    }
}

extension NotificationEnvelope {
    /// The envelope's text: name, object, deliverImmediately and userInfo (as fields: the form
    /// both transports' binary readers make).
    package var canonicalText: String {
        "\(name.debugDescription)|\(object?.debugDescription ?? "-")|\(deliverImmediately)|\(CanonicalText.of(fields: fields))"
    }
}
