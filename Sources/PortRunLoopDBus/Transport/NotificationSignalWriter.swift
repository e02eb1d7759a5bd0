import CDBus
import Foundation

/// Builds the `Posted` signal (``NotificationWireFormat``, `ssa{sv}b`) for an envelope, writing the
/// userInfo straight from the property list into libdbus' message: no ``BusValue`` tree in between.
///
/// The mapping, the keys' order (sorted) and the errors are ``PropertyListCoding``'s: a value with
/// no property-list form throws ``BusNotificationError/unsupportedUserInfoValue(keyPath:type:)``
/// naming the same key path, and nothing is sent.
///
/// Thread-safety: a stateless namespace; the message is the caller's until it is sent.
package enum NotificationSignalWriter {
    /// A new signal message carrying `envelope` (the caller owns its reference).
    package static func message(for envelope: NotificationEnvelope) throws(BusNotificationError) -> OpaquePointer {
        guard let message = dbus_message_new_signal(NotificationWireFormat.path.cString, NotificationWireFormat.interface.cString,
                                                    NotificationWireFormat.member.cString) else { throw .outOfMemory }
        do throws(BusNotificationError) {
            var iter = DBusMessageIter()
            dbus_message_iter_init_append(message, &iter)
            try appendString(envelope.name, type: DBusTypeCode.string, to: &iter)
            try appendString(envelope.object ?? "", type: DBusTypeCode.string, to: &iter)
            switch envelope.payload {
            case .fields(let fields), .both(let fields, _): try appendFields(fields, to: &iter, depth: 0)
            case .propertyList(let userInfo): try appendUserInfo(userInfo, to: &iter)
            case .none: try appendUserInfo(nil, to: &iter)
            }
            var flag: dbus_bool_t = envelope.deliverImmediately ? 1 : 0
            guard dbus_message_iter_append_basic(&iter, DBusTypeCode.boolean, &flag) != 0 else { throw .outOfMemory }
        } catch {
            dbus_message_unref(message)
            throw error
        }
        return message
    }

    /// The userInfo as `a{sv}`, keys sorted.
    private static func appendUserInfo(_ userInfo: [AnyHashable: Any]?, to iter: inout DBusMessageIter) throws(BusNotificationError) {
        guard let userInfo, !userInfo.isEmpty else {
            try container(DBusTypeCode.array, "{sv}", &iter, depth: 0) { _, _ throws(BusNotificationError) in }
            return
        }
        var entries: [(key: String, value: Any)] = []
        entries.reserveCapacity(userInfo.count)
        for (key, value) in userInfo {
            guard let name = PropertyListScalar.key(key) else {
                // A key that is not a string: the error (and which one is named first) as the
                // documented encoding reports it.
                _ = try PropertyListCoding.encode(userInfo: userInfo)
                throw .unsupportedUserInfoValue(keyPath: "\(key)", type: "key of type \(type(of: key.base))")
            }
            entries.append((name, value))
        }
        if entries.count > 1 { entries.sort { $0.key < $1.key } }
        try appendEntries(entries, to: &iter, prefix: "", depth: 0)
    }

    /// Fields as an `a{sv}`, in their order. Every value has a D-Bus form: nothing can fail but
    /// libdbus' allocations.
    private static func appendFields(_ fields: BusFields, to iter: inout DBusMessageIter, depth: Int) throws(BusNotificationError) {
        try container(DBusTypeCode.array, "{sv}", &iter, depth: depth) { array, depth throws(BusNotificationError) in
            for field in fields {
                try container(DBusTypeCode.dictEntry, nil, &array, depth: depth) { pair, depth throws(BusNotificationError) in
                    do throws(BusNotificationError) {
                        try appendString(field.key, type: DBusTypeCode.string, to: &pair)
                        try appendVariant(field.value, to: &pair, depth: depth)
                    } catch {
                        throw error.below(field.key)
                    }
                }
            }
        }
    }

    /// One field value in a variant (the property-list mapping's D-Bus types).
    private static func appendVariant(_ value: BusFieldValue, to iter: inout DBusMessageIter, depth: Int) throws(BusNotificationError) {
        switch value {
        case .string(let v): try variantString(v, to: &iter, depth: depth)
        case .bool(let v):
            var flag: dbus_bool_t = v ? 1 : 0
            try variantBasic(&flag, DBusTypeCode.boolean, "b", to: &iter, depth: depth)
        case .int(let v):
            var wide = Int64(v)
            try variantBasic(&wide, DBusTypeCode.int64, "x", to: &iter, depth: depth)
        case .unsignedInt(let v) where v <= UInt64(Int64.max):
            var wide = Int64(v)
            try variantBasic(&wide, DBusTypeCode.int64, "x", to: &iter, depth: depth)
        case .unsignedInt(var v): try variantBasic(&v, DBusTypeCode.uint64, "t", to: &iter, depth: depth)
        case .double(var v): try variantBasic(&v, DBusTypeCode.double, "d", to: &iter, depth: depth)
        case .data(let v): try variantData(v, to: &iter, depth: depth)
        case .array(let items):
            try container(DBusTypeCode.variant, "av", &iter, depth: depth) { variant, depth throws(BusNotificationError) in
                try container(DBusTypeCode.array, "v", &variant, depth: depth) { array, depth throws(BusNotificationError) in
                    for item in items { try appendVariant(item, to: &array, depth: depth) }
                }
            }
        case .dictionary(let fields):
            try container(DBusTypeCode.variant, "a{sv}", &iter, depth: depth) { variant, depth throws(BusNotificationError) in
                try appendFields(fields, to: &variant, depth: depth)
            }
        }
    }

    /// `entries` (sorted) as an `a{sv}`; an error's key path is prefixed with `prefix`.
    private static func appendEntries(_ entries: [(key: String, value: Any)], to iter: inout DBusMessageIter,
                                      prefix: String, depth: Int) throws(BusNotificationError) {
        try container(DBusTypeCode.array, "{sv}", &iter, depth: depth) { array, depth throws(BusNotificationError) in
            for entry in entries {
                try container(DBusTypeCode.dictEntry, nil, &array, depth: depth) { pair, depth throws(BusNotificationError) in
                    do throws(BusNotificationError) {
                        try appendString(entry.key, type: DBusTypeCode.string, to: &pair)
                        try appendVariant(entry.value, to: &pair, depth: depth)
                    } catch {
                        throw error.below(prefix + entry.key)
                    }
                }
            }
        }
    }

    /// One value in a variant. An error's key path is relative to the value (`""` for itself,
    /// `[2]` or `.key` below it): the caller prefixes its own.
    private static func appendVariant(_ value: Any, to iter: inout DBusMessageIter, depth: Int) throws(BusNotificationError) {
        if let scalar = PropertyListScalar(value) {
            switch scalar {
            case .string(let v): try variantString(v, to: &iter, depth: depth)
            case .bool(let v):
                var flag: dbus_bool_t = v ? 1 : 0
                try variantBasic(&flag, DBusTypeCode.boolean, "b", to: &iter, depth: depth)
            case .signed(var v): try variantBasic(&v, DBusTypeCode.int64, "x", to: &iter, depth: depth)
            case .unsigned(var v): try variantBasic(&v, DBusTypeCode.uint64, "t", to: &iter, depth: depth)
            case .double(var v): try variantBasic(&v, DBusTypeCode.double, "d", to: &iter, depth: depth)
            case .data(let v): try variantData(v, to: &iter, depth: depth)
            }
            return
        }
        switch value {
        case let v as [Any]:
            try container(DBusTypeCode.variant, "av", &iter, depth: depth) { variant, depth throws(BusNotificationError) in
                try container(DBusTypeCode.array, "v", &variant, depth: depth) { items, depth throws(BusNotificationError) in
                    for (index, item) in v.enumerated() {
                        do throws(BusNotificationError) {
                            try appendVariant(item, to: &items, depth: depth)
                        } catch {
                            throw error.below("[\(index)]")
                        }
                    }
                }
            }
        case let v as [String: Any]:
            try container(DBusTypeCode.variant, "a{sv}", &iter, depth: depth) { variant, depth throws(BusNotificationError) in
                try appendEntries(v.sorted { $0.key < $1.key }, to: &variant, prefix: ".", depth: depth)
            }
        case let v as [AnyHashable: Any]:
            // Rare (a bridged or explicitly typed dictionary): the documented encoding, then written.
            let encoded = try PropertyListCoding.encode(v, path: "")
            try refuseNUL(in: encoded)
            try container(DBusTypeCode.variant, "a{sv}", &iter, depth: depth) { variant, depth throws(BusNotificationError) in
                try checkDepth(depth + Self.depth(of: encoded) - 1)
                guard DBusMessageWriter.append(encoded, to: &variant) else { throw .outOfMemory }
            }
        default:
            throw .unsupportedUserInfoValue(keyPath: "", type: "\(type(of: value))")
        }
    }

    private static func variantBasic<T>(_ value: inout T, _ type: Int32, _ signature: StaticString,
                                        to iter: inout DBusMessageIter, depth: Int) throws(BusNotificationError) {
        try checkDepth(depth)
        var sub = DBusMessageIter()
        guard dbus_message_iter_open_container(&iter, DBusTypeCode.variant, signature.cString, &sub) != 0 else {
            throw .outOfMemory
        }
        guard withUnsafeMutablePointer(to: &value, { dbus_message_iter_append_basic(&sub, type, $0) }) != 0 else {
            dbus_message_iter_abandon_container(&iter, &sub)
            throw .outOfMemory
        }
        guard dbus_message_iter_close_container(&iter, &sub) != 0 else { throw .outOfMemory }
    }

    private static func variantData(_ value: Data, to iter: inout DBusMessageIter, depth: Int) throws(BusNotificationError) {
        try container(DBusTypeCode.variant, "ay", &iter, depth: depth) { variant, depth throws(BusNotificationError) in
            try container(DBusTypeCode.array, "y", &variant, depth: depth) { bytes, _ throws(BusNotificationError) in
                let appended = value.withUnsafeBytes { raw in
                    var base = raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
                    return dbus_message_iter_append_fixed_array(&bytes, DBusTypeCode.byte, &base, Int32(raw.count)) != 0
                }
                guard appended else { throw .outOfMemory }
            }
        }
    }

    private static func variantString(_ value: String, to iter: inout DBusMessageIter, depth: Int) throws(BusNotificationError) {
        try container(DBusTypeCode.variant, "s", &iter, depth: depth) { sub, _ throws(BusNotificationError) in
            try appendString(value, type: DBusTypeCode.string, to: &sub)
        }
    }

    private static func appendString(_ value: String, type: Int32, to iter: inout DBusMessageIter) throws(BusNotificationError) {
        try refuseNUL(value)
        let appended = value.withCString { pointer in
            var p: UnsafePointer<CChar>? = pointer
            return dbus_message_iter_append_basic(&iter, type, &p) != 0
        }
        guard appended else { throw .outOfMemory }
    }

    /// A D-Bus string cannot carry NUL: libdbus would cut it there, so such a string (a userInfo
    /// key or value) is refused, as a value the bus does not carry. Its key path is the caller's.
    private static func refuseNUL(_ value: String) throws(BusNotificationError) {
        if value.utf8.contains(0) {
            throw .unsupportedUserInfoValue(keyPath: "", type: "String containing NUL (a D-Bus string cannot carry it)")
        }
    }

    /// ``refuseNUL(_:)`` for every string of an encoded value.
    private static func refuseNUL(in value: BusValue) throws(BusNotificationError) {
        switch value {
        case .string(let s), .objectPath(let s), .signature(let s): try refuseNUL(s)
        case .array(_, let items), .structure(let items): for item in items { try refuseNUL(in: item) }
        case .dictionary(_, _, let entries):
            for entry in entries {
                do throws(BusNotificationError) {
                    try refuseNUL(in: entry.key)
                    try refuseNUL(in: entry.value)
                } catch {
                    if case .string(let key) = entry.key { throw error.below(".\(key)") }
                    throw error
                }
            }
        case .variant(let inner): try refuseNUL(in: inner)
        case .byte, .bool, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .bytes, .unsupported: break
        }
    }

    /// The deepest containers may nest in a message (`DBUS_MAXIMUM_TYPE_RECURSION_DEPTH` twice):
    /// libdbus writes a deeper one, but a peer's libdbus and the daemon refuse it as corrupted
    /// (the daemon then drops the sender's connection).
    static let maximumDepth = 64

    /// Throws unless a container may be opened inside `depth` open ones.
    private static func checkDepth(_ depth: Int) throws(BusNotificationError) {
        guard depth < maximumDepth else {
            throw .unsupportedUserInfoValue(keyPath: "", type: "a value nested deeper than D-Bus carries (\(maximumDepth) containers)")
        }
    }

    /// How deep `value`'s containers nest as libdbus writes it (an `ay` is one array).
    private static func depth(of value: BusValue) -> Int {
        switch value {
        case .variant(let inner): 1 + depth(of: inner)
        case .array(_, let items), .structure(let items): 1 + (items.lazy.map(depth(of:)).max() ?? 0)
        case .dictionary(_, _, let entries): 2 + (entries.lazy.map { max(depth(of: $0.key), depth(of: $0.value)) }.max() ?? 0)
        case .bytes: 1
        case .string, .objectPath, .signature, .byte, .bool, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .unsupported: 0
        }
    }

    /// Opens a container inside `depth` open ones, fills it with `body` (given the depth inside
    /// it), closes it (abandons it when `body` threw).
    private static func container(_ type: Int32, _ signature: StaticString?, _ iter: inout DBusMessageIter, depth: Int,
                                  _ body: (inout DBusMessageIter, Int) throws(BusNotificationError) -> Void) throws(BusNotificationError) {
        try checkDepth(depth)
        var sub = DBusMessageIter()
        let pointer = signature?.cString
        guard dbus_message_iter_open_container(&iter, type, pointer, &sub) != 0 else { throw .outOfMemory }
        do {
            try body(&sub, depth + 1)
        } catch {
            dbus_message_iter_abandon_container(&iter, &sub)
            throw error
        }
        guard dbus_message_iter_close_container(&iter, &sub) != 0 else { throw .outOfMemory }
    }
}

extension BusNotificationError {
    /// An unsupported value's error with `parent` put before its key path (other errors as they are).
    fileprivate func below(_ parent: String) -> BusNotificationError {
        guard case .unsupportedUserInfoValue(let keyPath, let type) = self else { return self }
        return .unsupportedUserInfoValue(keyPath: parent + keyPath, type: type)
    }
}
