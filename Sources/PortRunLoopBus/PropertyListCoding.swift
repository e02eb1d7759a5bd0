import Foundation

/// userInfo property lists ↔ ``BusValue``s (`a{sv}`), the mapping PortRunLoopDBus.docc/DBusNotifications.md
/// documents.
///
/// Encoding: `String` → `s`; `Bool` → `b`; every integer type → `x` (an unsigned value above
/// `Int64.max` → `t`); `Double`, `Float` → `d`; `Data` → `ay`; arrays → `av`; dictionaries with
/// `String` keys → `a{sv}`; an `NSNumber` by its stored type. Anything else (`Date`, `URL`, a
/// non-string key, a custom type) throws ``BusNotificationError/unsupportedUserInfoValue(keyPath:type:)``.
///
/// Decoding: `s`, `o`, `g` → `String`; `b` → `Bool`; integers → `Int` (a `t` above `Int.max` →
/// `UInt64`); `d` → `Double`; `ay` → `Data`; other arrays and structures → `[Any]`; dictionaries →
/// `[String: Any]` (other key types → `[AnyHashable: Any]`); variants are unwrapped.
///
/// Thread-safety: a stateless namespace.
package enum PropertyListCoding {
    /// `userInfo` as an `a{sv}` value, or the typed error naming the first value with no
    /// property-list form.
    ///
    /// Thread-safety: any thread.
    package static func encode(userInfo: [AnyHashable: Any]) throws(BusNotificationError) -> BusValue {
        var entries: [BusDictionaryEntry] = []
        entries.reserveCapacity(userInfo.count)
        for (key, value) in userInfo.sorted(by: { "\($0.key)" < "\($1.key)" }) {
            guard let name = PropertyListScalar.key(key) else {
                throw .unsupportedUserInfoValue(keyPath: "\(key)", type: "key of type \(type(of: key.base))")
            }
            entries.append(BusDictionaryEntry(key: .string(name), value: .variant(try encode(value, path: name))))
        }
        return .dictionary(keySignature: "s", valueSignature: "v", entries)
    }

    /// One userInfo value, named `path` in the error (`"options.when"`), as a ``BusValue``.
    ///
    /// Thread-safety: any thread.
    package static func encode(_ value: Any, path: String) throws(BusNotificationError) -> BusValue {
        if let scalar = PropertyListScalar(value) {
            switch scalar {
            case .string(let v): return .string(v)
            case .bool(let v): return .bool(v)
            case .signed(let v): return .int64(v)
            case .unsigned(let v): return .uint64(v)
            case .double(let v): return .double(v)
            case .data(let v): return .bytes(v)
            }
        }
        switch value {
        case let v as [Any]:
            var items: [BusValue] = []
            items.reserveCapacity(v.count)
            for (index, item) in v.enumerated() { items.append(.variant(try encode(item, path: "\(path)[\(index)]"))) }
            return .array(elementSignature: "v", items)
        case let v as [String: Any]:
            var entries: [BusDictionaryEntry] = []
            for (key, item) in v.sorted(by: { $0.key < $1.key }) {
                entries.append(BusDictionaryEntry(key: .string(key), value: .variant(try encode(item, path: "\(path).\(key)"))))
            }
            return .dictionary(keySignature: "s", valueSignature: "v", entries)
        case let v as [AnyHashable: Any]:
            var entries: [BusDictionaryEntry] = []
            for (key, item) in v {
                guard let name = PropertyListScalar.key(key) else {
                    throw .unsupportedUserInfoValue(keyPath: "\(path).\(key)", type: "key of type \(type(of: key.base))")
                }
                entries.append(BusDictionaryEntry(key: .string(name), value: .variant(try encode(item, path: "\(path).\(name)"))))
            }
            entries.sort { ($0.key.stringValue ?? "") < ($1.key.stringValue ?? "") }
            return .dictionary(keySignature: "s", valueSignature: "v", entries)
        default:
            throw .unsupportedUserInfoValue(keyPath: path, type: "\(type(of: value))")
        }
    }

    /// The property list a userInfo `a{s…}` stands for; nil for a value that is not one.
    ///
    /// Thread-safety: any thread.
    package static func decode(userInfo value: BusValue) -> [AnyHashable: Any]? {
        guard case .dictionary("s", _, let entries) = value else { return nil }
        var result: [AnyHashable: Any] = [:]
        for entry in entries {
            guard let key = entry.key.stringValue, let item = decode(entry.value) else { return nil }
            result[key] = item
        }
        return result
    }

    package static func decode(_ value: BusValue) -> Any? {
        switch value {
        case .string(let s), .objectPath(let s), .signature(let s): return s
        case .bool(let v): return v
        case .byte(let v): return Int(v)
        case .int16(let v): return Int(v)
        case .uint16(let v): return Int(v)
        case .int32(let v): return Int(v)
        case .uint32(let v): return Int(v)
        case .int64(let v): return Int(v)
        case .uint64(let v): return v <= UInt64(Int.max) ? Int(v) : v
        case .double(let v): return v
        case .bytes(let v): return v
        case .variant(let inner): return decode(inner)
        case .array(_, let items), .structure(let items):
            var out: [Any] = []
            out.reserveCapacity(items.count)
            for item in items {
                guard let decoded = decode(item) else { return nil }
                out.append(decoded)
            }
            return out
        case .dictionary(let keySignature, _, let entries):
            if keySignature == "s" {
                var out: [String: Any] = [:]
                for entry in entries {
                    guard let key = entry.key.stringValue, let item = decode(entry.value) else { return nil }
                    out[key] = item
                }
                return out
            }
            var out: [AnyHashable: Any] = [:]
            for entry in entries {
                guard let key = decode(entry.key) as? AnyHashable, let item = decode(entry.value) else { return nil }
                out[key] = item
            }
            return out
        case .unsupported:
            return nil
        }
    }
}
