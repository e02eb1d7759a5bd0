import Foundation
import PortRunLoopBus

/// One userInfo value in the JSON envelope, tagged with its type so that nothing is guessed on the
/// way back: `{"string":"…"}`, `{"int":-3}`, `{"uint":18446744073709551615}`, `{"double":1.5}`
/// (`"nan"`, `"inf"`, `"-inf"` as strings), `{"bool":true}`, `{"data":"<base64>"}`,
/// `{"array":[…]}`, `{"dict":{"key":…}}` — the property-list types PortRunLoopBus's
/// `PropertyListCoding` maps, the same for both transports.
///
/// Thread-safety: a value type.
indirect enum RedisWireValue: Codable, Sendable {
    case string(String)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case bool(Bool)
    case data(Data)
    case array([RedisWireValue])
    case dict([String: RedisWireValue])

    private enum Tag: String, CodingKey, CaseIterable {
        case string, int, uint, double, bool, data, array, dict
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Tag.self)
        guard container.allKeys.count == 1, let tag = container.allKeys.first else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "a value is an object with exactly one type tag"))
        }
        switch tag {
        case .string: self = .string(try container.decode(String.self, forKey: tag))
        case .int: self = .int(try container.decode(Int64.self, forKey: tag))
        case .uint: self = .uint(try container.decode(UInt64.self, forKey: tag))
        case .double: self = .double(try container.decode(Double.self, forKey: tag))
        case .bool: self = .bool(try container.decode(Bool.self, forKey: tag))
        case .data: self = .data(try container.decode(Data.self, forKey: tag))
        case .array: self = .array(try container.decode([RedisWireValue].self, forKey: tag))
        case .dict: self = .dict(try container.decode([String: RedisWireValue].self, forKey: tag))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Tag.self)
        switch self {
        case .string(let v): try container.encode(v, forKey: .string)
        case .int(let v): try container.encode(v, forKey: .int)
        case .uint(let v): try container.encode(v, forKey: .uint)
        case .double(let v): try container.encode(v, forKey: .double)
        case .bool(let v): try container.encode(v, forKey: .bool)
        case .data(let v): try container.encode(v, forKey: .data)
        case .array(let v): try container.encode(v, forKey: .array)
        case .dict(let v): try container.encode(v, forKey: .dict)
        }
    }

    /// The wire form of a value `PropertyListCoding.encode` produced (nil for a kind it never
    /// produces).
    init?(_ value: BusValue) {
        switch value {
        case .string(let s), .objectPath(let s), .signature(let s): self = .string(s)
        case .bool(let v): self = .bool(v)
        case .byte(let v): self = .int(Int64(v))
        case .int16(let v): self = .int(Int64(v))
        case .uint16(let v): self = .int(Int64(v))
        case .int32(let v): self = .int(Int64(v))
        case .uint32(let v): self = .int(Int64(v))
        case .int64(let v): self = .int(v)
        case .uint64(let v): self = v <= UInt64(Int64.max) ? .int(Int64(v)) : .uint(v)
        case .double(let v): self = .double(v)
        case .bytes(let v): self = .data(v)
        case .variant(let inner):
            guard let wire = RedisWireValue(inner) else { return nil }
            self = wire
        case .array(_, let items), .structure(let items):
            var out: [RedisWireValue] = []
            out.reserveCapacity(items.count)
            for item in items {
                guard let wire = RedisWireValue(item) else { return nil }
                out.append(wire)
            }
            self = .array(out)
        case .dictionary(_, _, let entries):
            var out: [String: RedisWireValue] = [:]
            for entry in entries {
                guard let key = entry.key.stringValue, let wire = RedisWireValue(entry.value) else { return nil }
                out[key] = wire
            }
            self = .dict(out)
        case .unsupported:
            return nil
        }
    }

    /// The D-Bus-typed value `PropertyListCoding.decode` turns into a property list.
    var busValue: BusValue {
        switch self {
        case .string(let v): .string(v)
        case .int(let v): .int64(v)
        case .uint(let v): .uint64(v)
        case .double(let v): .double(v)
        case .bool(let v): .bool(v)
        case .data(let v): .bytes(v)
        case .array(let items): .array(elementSignature: "v", items.map { .variant($0.busValue) })
        case .dict(let entries): Self.dictionary(entries)
        }
    }

    /// How deep containers nest in the value (0 for a scalar): at most
    /// ``RedisBinaryPayload/maximumDepth`` in a userInfo value, in either payload form.
    var nesting: Int {
        switch self {
        case .array(let items): 1 + (items.lazy.map(\.nesting).max() ?? 0)
        case .dict(let entries): 1 + (entries.values.lazy.map(\.nesting).max() ?? 0)
        case .string, .int, .uint, .double, .bool, .data: 0
        }
    }

    /// Whether every value of a userInfo nests within ``RedisBinaryPayload/maximumDepth``.
    static func nestsWithinLimit(_ entries: [String: RedisWireValue]) -> Bool {
        entries.values.allSatisfy { $0.nesting <= RedisBinaryPayload.maximumDepth }
    }

    static func dictionary(_ entries: [String: RedisWireValue]) -> BusValue {
        .dictionary(keySignature: "s", valueSignature: "v",
                    entries.sorted { $0.key < $1.key }.map { BusDictionaryEntry(key: .string($0.key), value: .variant($0.value.busValue)) })
    }
}
