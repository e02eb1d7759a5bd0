import Foundation

/// A userInfo value that is not a container, as the documented mapping reads it
/// (<doc:DistributedNotifications>, "userInfo"). Every encoder of a userInfo (``PropertyListCoding``'s
/// ``BusValue`` tree, the D-Bus signal writer, the Redis binary payload) asks this one switch, so
/// they cannot disagree on what a value is.
///
/// Thread-safety: a value; `Sendable`.
package enum PropertyListScalar: Sendable {
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
    package init?(_ value: Any) {
        // The common types first, by their exact type: the existential is opened (its dynamic type
        // compared, its value reinterpreted) instead of cast, a `swift_dynamicCast` costing about
        // five times as much per value.
        if let common = Self.common(value) {
            self = common
            return
        }
        let type = type(of: value)
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

    /// A userInfo key as the string it must be: a `String` found by its exact type (as ``init(_:)``
    /// finds the common types), else by a cast (an `NSString`); nil for any other key.
    ///
    /// Thread-safety: any thread.
    package static func key(_ key: AnyHashable) -> String? {
        let base = key.base
        if case .string(let string)? = common(base) { return string }
        return base as? String
    }

    /// `value` when its type is exactly `String`, `Int`, `Bool` or `Double`; nil otherwise.
    private static func common(_ value: Any) -> PropertyListScalar? {
        _openExistential(value, do: commonScalar)
    }

    /// An unsigned integer: `.signed` up to `Int64.max`, `.unsigned` above.
    private init(unsigned value: UInt64) {
        self = value <= UInt64(Int64.max) ? .signed(Int64(value)) : .unsigned(value)
    }
}

/// ``PropertyListScalar``'s common types by the exact type `T` is (a free function: SILGen of this
/// compiler, 6.3, crashes on `_openExistential` given a generic static method).
private func commonScalar<T>(_ value: T) -> PropertyListScalar? {
    if T.self == String.self { return .string(unsafeBitCast(value, to: String.self)) }
    if T.self == Int.self { return .signed(Int64(unsafeBitCast(value, to: Int.self))) }
    if T.self == Bool.self { return .bool(unsafeBitCast(value, to: Bool.self)) }
    if T.self == Double.self { return .double(unsafeBitCast(value, to: Double.self)) }
    return nil
}
