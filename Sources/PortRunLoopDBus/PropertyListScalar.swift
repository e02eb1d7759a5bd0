import Foundation

/// A userInfo value that is not a container, as the documented mapping reads it
/// (Docs/DistributedNotifications.md). Every encoder of a userInfo (``PropertyListCoding``'s
/// ``BusValue`` tree, the D-Bus signal writer, the Redis binary payload) asks this one switch, so
/// they cannot disagree on what a value is.
///
/// Thread-safety: a value; `Sendable`.
@_spi(Transport)
public enum PropertyListScalar: Sendable {
    /// A `String` or `Substring`.
    ///
    /// Thread-safety: a value.
    case string(String)
    /// A `Bool` (not an `NSNumber` holding one).
    ///
    /// Thread-safety: a value.
    case bool(Bool)
    /// Any integer, signed or unsigned, up to `Int64.max`.
    ///
    /// Thread-safety: a value.
    case signed(Int64)
    /// An unsigned integer above `Int64.max`.
    ///
    /// Thread-safety: a value.
    case unsigned(UInt64)
    /// A `Double` or `Float`.
    ///
    /// Thread-safety: a value.
    case double(Double)
    /// `Data`.
    ///
    /// Thread-safety: a value.
    case data(Data)

    /// `value` as a scalar; nil for a container, or for a value with no property-list form. An
    /// `NSNumber` goes by the type it stores.
    ///
    /// Thread-safety: any thread.
    public init?(_ value: Any) {
        let type = type(of: value)
        // The common types first, by their exact type: no dynamic cast.
        if type == String.self { self = .string(value as! String); return }
        if type == Int.self { self = .signed(Int64(value as! Int)); return }
        if type == Bool.self { self = .bool(value as! Bool); return }
        if type == Double.self { self = .double(value as! Double); return }
        switch value {
        case let v as String: self = .string(v)
        case let v as Substring: self = .string(String(v))
        case let v as NSNumber where type is NSNumber.Type:
            switch String(cString: v.objCType) {
            case "d", "f": self = .double(v.doubleValue)
            case "Q", "L": self = Self(unsigned: v.uint64Value)
            default: self = .signed(v.int64Value)
            }
        case let v as Int: self = .signed(Int64(v))
        case let v as Int8: self = .signed(Int64(v))
        case let v as Int16: self = .signed(Int64(v))
        case let v as Int32: self = .signed(Int64(v))
        case let v as Int64: self = .signed(v)
        case let v as UInt: self = Self(unsigned: UInt64(v))
        case let v as UInt8: self = .signed(Int64(v))
        case let v as UInt16: self = .signed(Int64(v))
        case let v as UInt32: self = .signed(Int64(v))
        case let v as UInt64: self = Self(unsigned: v)
        case let v as Double: self = .double(v)
        case let v as Float: self = .double(Double(v))
        case let v as Data: self = .data(v)
        default: return nil
        }
    }

    /// An unsigned integer: `.signed` up to `Int64.max`, `.unsigned` above.
    private init(unsigned value: UInt64) {
        self = value <= UInt64(Int64.max) ? .signed(Int64(value)) : .unsigned(value)
    }
}
