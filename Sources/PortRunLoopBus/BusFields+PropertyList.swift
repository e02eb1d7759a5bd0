import Foundation

extension BusFields {
    /// The fields as the property list an observer of `Notification`s receives: ``BusFieldValue/int(_:)``
    /// → `Int`, ``BusFieldValue/unsignedInt(_:)`` → `UInt64`, ``BusFieldValue/double(_:)`` →
    /// `Double`, ``BusFieldValue/string(_:)`` → `String`, ``BusFieldValue/bool(_:)`` → `Bool`,
    /// ``BusFieldValue/data(_:)`` → `Data`, arrays → `[Any]`, dictionaries → `[String: Any]`: what
    /// the same userInfo read from the bus decodes to.
    ///
    /// Thread-safety: a value type.
    public var propertyList: [AnyHashable: Any] {
        var result = [AnyHashable: Any](minimumCapacity: count)
        for entry in self { result[entry.key] = entry.value.propertyListValue }
        return result
    }

    /// The fields of a property list read from the wire (every key a string, every value one a
    /// decoder makes): the reverse of ``propertyList``. A nested dictionary whose keys are not
    /// strings becomes an array of its keys and values alternating (``BusFieldValue/array(_:)``);
    /// a value of no property-list type (which no decoder makes) is left out.
    package init(decodedPropertyList dictionary: [AnyHashable: Any]) {
        var entries: [Element] = []
        entries.reserveCapacity(dictionary.count)
        for (key, value) in dictionary {
            guard let name = PropertyListScalar.key(key), let field = BusFieldValue(decoded: value) else { continue }
            entries.append((name, field))
        }
        entries.sort { $0.key < $1.key }
        self.init(uniqueEntries: entries)
    }
}

extension BusFieldValue {
    /// The value as a property list holds it (see ``BusFields/propertyList``).
    var propertyListValue: Any {
        switch self {
        case .string(let value): value
        case .bool(let value): value
        case .int(let value): value
        case .unsignedInt(let value): value <= UInt64(Int.max) ? Int(value) : value
        case .double(let value): value
        case .data(let value): value
        case .array(let values): values.map(\.propertyListValue)
        case .dictionary(let fields):
            Dictionary(uniqueKeysWithValues: fields.map { ($0.key, $0.value.propertyListValue) })
        }
    }

    /// A decoded property-list value as a field (see ``BusFields/init(decodedPropertyList:)``).
    init?(decoded value: Any) {
        if let scalar = PropertyListScalar(value) {
            switch scalar {
            case .string(let v): self = .string(v)
            case .bool(let v): self = .bool(v)
            case .signed(let v): self = .int(Int(v))
            case .unsigned(let v): self = .unsignedInt(v)
            case .double(let v): self = .double(v)
            case .data(let v): self = .data(v)
            }
            return
        }
        switch value {
        case let items as [Any]:
            self = .array(items.compactMap { BusFieldValue(decoded: $0) })
        case let dictionary as [String: Any]:
            self = .dictionary(BusFields(decodedPropertyList: dictionary))
        case let dictionary as [AnyHashable: Any]:
            var alternating: [BusFieldValue] = []
            for (key, item) in dictionary {
                guard let key = BusFieldValue(decoded: key.base), let item = BusFieldValue(decoded: item) else { continue }
                alternating += [key, item]
            }
            self = .array(alternating)
        default:
            return nil
        }
    }
}
