import PortRunLoopKit
import Foundation

/// A notification's userInfo as typed fields: string keys, each with a ``BusFieldValue``, in the
/// order they were added (or arrived). What ``BusNotificationCenter/post(name:object:fields:deliverImmediately:)``
/// sends and ``BusNotificationCenter/addFieldsObserver(forName:object:suspensionBehavior:on:using:)``
/// receives.
///
/// The fields travel exactly as the same userInfo posted as a property list (the same `a{sv}` on
/// D-Bus, the same payload on Redis), so a program observing with `[AnyHashable: Any]`, or another
/// program on the bus, sees no difference. What differs is the cost in this process: a
/// `[AnyHashable: Any]` hashes its keys and compares them through `AnyHashable` (each comparison
/// opens both keys' boxes through the runtime's casts), while fields are found by comparing
/// strings, and their values need no cast to be read.
///
///     try center.post(name: .jobDone, fields: ["job": .string(id), "seconds": .double(elapsed)])
///     center.addFieldsObserver(forName: .jobDone, on: loop) { note in
///         guard let id = note.fields["job"]?.stringValue else { return }
///     }
///
/// A key appears at most once: a literal with a key twice traps, as a `Dictionary` literal does;
/// the subscript's setter replaces a value in place.
///
/// Thread-safety: a value type; `Sendable`.
public struct BusFields: Sendable, Equatable, RandomAccessCollection, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One field.
    ///
    /// Thread-safety: a value type.
    public typealias Element = (key: String, value: BusFieldValue)

    private var entries: [Element]

    /// No fields.
    ///
    /// Thread-safety: a value type.
    public init() { entries = [] }

    /// The fields of a literal, in its order. A key given twice traps.
    ///
    /// Thread-safety: a value type.
    public init(dictionaryLiteral elements: (String, BusFieldValue)...) {
        self.init(literal: elements)
    }

    /// The fields of a dictionary literal (this type's or ``BusFieldValue``'s): a key given twice
    /// traps, as it does in a `Dictionary` literal.
    init(literal elements: [(String, BusFieldValue)]) {
        let entries = elements.map { (key: $0.0, value: $0.1) }
        if let key = Self.repeatedKey(in: entries) { Misuse.fail("a dictionary literal contains the key \"\(key)\" twice") }
        self.entries = entries
    }

    /// Fields already known to have unique keys.
    package init(uniqueEntries: [Element]) { entries = uniqueEntries }

    /// Fields as read off the wire, where a key may come twice: the later value wins, as it does
    /// in a dictionary (at the first one's position). The common case, no key twice, keeps the
    /// array it was given.
    package init(readEntries: [Element]) {
        guard Self.repeatedKey(in: readEntries) != nil else {
            entries = readEntries
            return
        }
        var positions = [String: Int](minimumCapacity: readEntries.count)
        var unique: [Element] = []
        unique.reserveCapacity(readEntries.count)
        for entry in readEntries {
            if let position = positions[entry.key] {
                unique[position].value = entry.value
            } else {
                positions[entry.key] = unique.count
                unique.append(entry)
            }
        }
        entries = unique
    }

    /// The first key of `entries` that comes a second time, or nil. Linear: a few entries are
    /// compared pairwise (no hashing), more through a set. With `keysAreASCII` (the caller knows
    /// every key is ASCII, as a reader of the wire does), two keys of different byte counts are
    /// told apart by their counts alone: `==` follows canonical equivalence, under which ASCII
    /// strings are equal only byte for byte.
    package static func repeatedKey(in entries: [Element], keysAreASCII: Bool = false) -> String? {
        if entries.count <= 8 {
            for index in entries.indices.dropFirst() {
                let key = entries[index].key
                let count = keysAreASCII ? key.utf8.count : -1
                if entries[..<index].contains(where: { (count < 0 || $0.key.utf8.count == count) && $0.key == key }) { return key }
            }
            return nil
        }
        var seen = Set<String>(minimumCapacity: entries.count)
        for entry in entries where !seen.insert(entry.key).inserted { return entry.key }
        return nil
    }

    /// The value for `key`, found by comparing strings (fields are few; no hashing). Setting a
    /// value replaces the key's value in place or appends it; setting nil removes the key.
    ///
    /// Thread-safety: a value type.
    public subscript(key: String) -> BusFieldValue? {
        get {
            for entry in entries where entry.key == key { return entry.value }
            return nil
        }
        set {
            let existing = index(forKey: key)
            switch (existing, newValue) {
            case (let index?, let value?): entries[index].value = value
            case (let index?, nil): entries.remove(at: index)
            case (nil, let value?): entries.append((key, value))
            case (nil, nil): break
            }
        }
    }

    /// The position of `key`, or nil.
    ///
    /// Thread-safety: a value type.
    public func index(forKey key: String) -> Int? {
        entries.firstIndex { $0.key == key }
    }

    /// The keys, in order.
    ///
    /// Thread-safety: a value type.
    public var keys: [String] { entries.map(\.key) }

    /// The first position (0).
    ///
    /// Thread-safety: a value type.
    public var startIndex: Int { 0 }

    /// One past the last field.
    ///
    /// Thread-safety: a value type.
    public var endIndex: Int { entries.count }

    /// The field at `position`.
    ///
    /// Thread-safety: a value type.
    public subscript(position: Int) -> Element { entries[position] }

    /// Equal when both hold the same keys with equal values, in any order.
    ///
    /// Thread-safety: a value type.
    public static func == (lhs: BusFields, rhs: BusFields) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for entry in lhs.entries {
            guard let other = rhs[entry.key], other == entry.value else { return false }
        }
        return true
    }

    /// `["key": value, …]`.
    ///
    /// Thread-safety: a value type.
    public var description: String {
        guard !entries.isEmpty else { return "[:]" }
        return "[" + entries.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "]"
    }
}

/// One value of ``BusFields``: the property-list types a distributed notification's userInfo may
/// hold (<doc:DistributedNotifications>; the transports' guides have their D-Bus and Redis forms).
///
/// Literals make values: `"text"`, `42`, `1.5`, `true`, `[1, 2]`, `["key": "value"]`; a variable
/// goes in its case: `.int(count)`.
///
/// Thread-safety: a value type; `Sendable`.
public enum BusFieldValue: Sendable, Equatable, CustomStringConvertible, ExpressibleByStringLiteral,
    ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral {
    /// A string (D-Bus `s`; a received `o` or `g` arrives as one too).
    case string(String)
    /// A boolean (`b`).
    case bool(Bool)
    /// An integer (`x`; a received `y`, `n`, `q`, `i`, `u`, or a `t` up to `Int.max`, arrives as one).
    case int(Int)
    /// An unsigned integer above `Int.max` (`t`). Posted with a smaller value, it travels and
    /// arrives as ``int(_:)``, as a `UInt64` in a property list does.
    case unsignedInt(UInt64)
    /// A double (`d`).
    case double(Double)
    /// Bytes (`ay`).
    case data(Data)
    /// An array (`av`; a received structure arrives as one). A received dictionary whose keys are
    /// not strings (only another program's D-Bus signal can carry one) arrives as an array of its
    /// keys and values alternating, as `JSONEncoder` writes such a dictionary.
    case array([BusFieldValue])
    /// A dictionary with string keys (`a{sv}`).
    case dictionary(BusFields)

    /// A string.
    ///
    /// Thread-safety: a value type.
    public init(stringLiteral value: String) { self = .string(value) }

    /// An integer.
    ///
    /// Thread-safety: a value type.
    public init(integerLiteral value: Int) { self = .int(value) }

    /// A double.
    ///
    /// Thread-safety: a value type.
    public init(floatLiteral value: Double) { self = .double(value) }

    /// A boolean.
    ///
    /// Thread-safety: a value type.
    public init(booleanLiteral value: Bool) { self = .bool(value) }

    /// An array.
    ///
    /// Thread-safety: a value type.
    public init(arrayLiteral elements: BusFieldValue...) { self = .array(elements) }

    /// A dictionary (a key given twice traps).
    ///
    /// Thread-safety: a value type.
    public init(dictionaryLiteral elements: (String, BusFieldValue)...) {
        self = .dictionary(BusFields(literal: elements))
    }

    /// The string, or nil.
    ///
    /// Thread-safety: a value type.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, or nil (also for an ``unsignedInt(_:)``, which does not fit).
    ///
    /// Thread-safety: a value type.
    public var intValue: Int? {
        if case .int(let value) = self { return value }
        return nil
    }

    /// The double, or nil.
    ///
    /// Thread-safety: a value type.
    public var doubleValue: Double? {
        if case .double(let value) = self { return value }
        return nil
    }

    /// The boolean, or nil.
    ///
    /// Thread-safety: a value type.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The bytes, or nil.
    ///
    /// Thread-safety: a value type.
    public var dataValue: Data? {
        if case .data(let value) = self { return value }
        return nil
    }

    /// The array, or nil.
    ///
    /// Thread-safety: a value type.
    public var arrayValue: [BusFieldValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The dictionary, or nil.
    ///
    /// Thread-safety: a value type.
    public var dictionaryValue: BusFields? {
        if case .dictionary(let value) = self { return value }
        return nil
    }

    /// The value as Swift writes it (strings quoted).
    ///
    /// Thread-safety: a value type.
    public var description: String {
        switch self {
        case .string(let value): "\"\(value)\""
        case .bool(let value): "\(value)"
        case .int(let value): "\(value)"
        case .unsignedInt(let value): "\(value)"
        case .double(let value): "\(value)"
        case .data(let value): "\(value)"
        case .array(let values): "[" + values.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(let fields): fields.description
        }
    }
}
