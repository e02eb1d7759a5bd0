import Foundation

/// One D-Bus value, typed as on the wire: what a D-Bus signal carries (PortRunLoopDBus's
/// `BusSignal`), and what a userInfo property list maps to on D-Bus.
///
/// Containers keep their D-Bus element signature, so an empty array still knows what it is an
/// array of. Unix fd values (`h`) are not read: a signal carrying one is decoded with
/// ``unsupported(_:)`` in its place.
///
/// Thread-safety: a value type; `Sendable`.
public indirect enum BusValue: Sendable, Hashable, CustomStringConvertible {
    /// `y`
    case byte(UInt8)
    /// `b`
    case bool(Bool)
    /// `n`
    case int16(Int16)
    /// `q`
    case uint16(UInt16)
    /// `i`
    case int32(Int32)
    /// `u`
    case uint32(UInt32)
    /// `x`
    case int64(Int64)
    /// `t`
    case uint64(UInt64)
    /// `d`
    case double(Double)
    /// `s`
    case string(String)
    /// `o`
    case objectPath(String)
    /// `g`
    case signature(String)
    /// `ay`, read and written as one block.
    case bytes(Data)
    /// `a<element>` other than `ay` and dictionaries.
    case array(elementSignature: String, [BusValue])
    /// `a{<key><value>}`, entries in wire order.
    case dictionary(keySignature: String, valueSignature: String, [BusDictionaryEntry])
    /// `(…)`
    case structure([BusValue])
    /// `v`
    case variant(BusValue)
    /// A value of a type this library does not read (its signature), such as a Unix fd (`h`).
    case unsupported(String)

    /// The value's D-Bus signature, e.g. `a{sv}`.
    ///
    /// Thread-safety: a value type.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .bool: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .bytes: "ay"
        case .array(let element, _): "a" + element
        case .dictionary(let key, let value, _): "a{" + key + value + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        case .unsupported(let signature): signature
        }
    }

    /// The string of an `s`, `o` or `g` value, else nil.
    ///
    /// Thread-safety: a value type.
    public var stringValue: String? {
        switch self {
        case .string(let s), .objectPath(let s), .signature(let s): s
        default: nil
        }
    }

    /// A readable form, e.g. `s "name"`.
    ///
    /// Thread-safety: a value type.
    public var description: String {
        switch self {
        case .byte(let v): "y \(v)"
        case .bool(let v): "b \(v)"
        case .int16(let v): "n \(v)"
        case .uint16(let v): "q \(v)"
        case .int32(let v): "i \(v)"
        case .uint32(let v): "u \(v)"
        case .int64(let v): "x \(v)"
        case .uint64(let v): "t \(v)"
        case .double(let v): "d \(v)"
        case .string(let v): "s \"\(v)\""
        case .objectPath(let v): "o \(v)"
        case .signature(let v): "g \(v)"
        case .bytes(let v): "ay \(v.count) bytes"
        case .array(_, let items): "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(_, _, let entries): "{" + entries.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .structure(let fields): "(" + fields.map(\.description).joined(separator: ", ") + ")"
        case .variant(let inner): "<\(inner)>"
        case .unsupported(let signature): "unsupported \(signature)"
        }
    }
}

/// One entry of a ``BusValue/dictionary(keySignature:valueSignature:_:)``.
///
/// Thread-safety: a value type; `Sendable`.
public struct BusDictionaryEntry: Sendable, Hashable {
    /// The key (a basic type).
    ///
    /// Thread-safety: a value type.
    public var key: BusValue
    /// The value.
    ///
    /// Thread-safety: a value type.
    public var value: BusValue

    /// An entry.
    ///
    /// Thread-safety: a value type.
    public init(key: BusValue, value: BusValue) {
        self.key = key
        self.value = value
    }
}
