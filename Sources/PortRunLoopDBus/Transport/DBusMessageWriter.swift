import CDBus
import Foundation

/// Appends ``BusValue``s to a libdbus message through its `DBusMessageIter` API.
///
/// Thread-safety: a stateless namespace; the message must not be shared while it is written.
enum DBusMessageWriter {
    /// Appends `values` as the message's arguments; false when libdbus ran out of memory.
    static func append(_ values: [BusValue], to message: OpaquePointer) -> Bool {
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(message, &iter)
        for value in values where !append(value, to: &iter) { return false }
        return true
    }

    static func append(_ value: BusValue, to iter: inout DBusMessageIter) -> Bool {
        switch value {
        case .byte(var v): return dbus_message_iter_append_basic(&iter, DBusTypeCode.byte, &v) != 0
        case .bool(let b):
            var v: dbus_bool_t = b ? 1 : 0
            return dbus_message_iter_append_basic(&iter, DBusTypeCode.boolean, &v) != 0
        case .int16(var v): return dbus_message_iter_append_basic(&iter, DBusTypeCode.int16, &v) != 0
        case .uint16(var v): return dbus_message_iter_append_basic(&iter, DBusTypeCode.uint16, &v) != 0
        case .int32(var v): return dbus_message_iter_append_basic(&iter, DBusTypeCode.int32, &v) != 0
        case .uint32(var v): return dbus_message_iter_append_basic(&iter, DBusTypeCode.uint32, &v) != 0
        case .int64(var v): return dbus_message_iter_append_basic(&iter, DBusTypeCode.int64, &v) != 0
        case .uint64(var v): return dbus_message_iter_append_basic(&iter, DBusTypeCode.uint64, &v) != 0
        case .double(var v): return dbus_message_iter_append_basic(&iter, DBusTypeCode.double, &v) != 0
        case .string(let s): return appendString(s, type: DBusTypeCode.string, to: &iter)
        case .objectPath(let s): return appendString(s, type: DBusTypeCode.objectPath, to: &iter)
        case .signature(let s): return appendString(s, type: DBusTypeCode.signature, to: &iter)
        case .bytes(let data):
            return container(DBusTypeCode.array, "y", &iter) { sub in
                data.withUnsafeBytes { raw in
                    var base = raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
                    return dbus_message_iter_append_fixed_array(&sub, DBusTypeCode.byte, &base, Int32(raw.count)) != 0
                }
            }
        case .array(let element, let items):
            return container(DBusTypeCode.array, element, &iter) { sub in
                items.allSatisfy { append($0, to: &sub) }
            }
        case .dictionary(let key, let valueSignature, let entries):
            return container(DBusTypeCode.array, "{" + key + valueSignature + "}", &iter) { sub in
                entries.allSatisfy { entry in
                    container(DBusTypeCode.dictEntry, nil, &sub) { pair in
                        append(entry.key, to: &pair) && append(entry.value, to: &pair)
                    }
                }
            }
        case .structure(let fields):
            return container(DBusTypeCode.structure, nil, &iter) { sub in fields.allSatisfy { append($0, to: &sub) } }
        case .variant(let inner):
            return container(DBusTypeCode.variant, inner.signature, &iter) { sub in append(inner, to: &sub) }
        case .unsupported:
            return false
        }
    }

    private static func appendString(_ s: String, type: Int32, to iter: inout DBusMessageIter) -> Bool {
        s.withCString { pointer in
            var p: UnsafePointer<CChar>? = pointer
            return dbus_message_iter_append_basic(&iter, type, &p) != 0
        }
    }

    /// Opens a container, fills it with `body`, closes it (abandons it when `body` failed).
    private static func container(_ type: Int32, _ signature: String?, _ iter: inout DBusMessageIter,
                                  _ body: (inout DBusMessageIter) -> Bool) -> Bool {
        var sub = DBusMessageIter()
        let opened: dbus_bool_t
        if let signature {
            opened = signature.withCString { dbus_message_iter_open_container(&iter, type, $0, &sub) }
        } else {
            opened = dbus_message_iter_open_container(&iter, type, nil, &sub)
        }
        guard opened != 0 else { return false }
        guard body(&sub) else {
            dbus_message_iter_abandon_container(&iter, &sub)
            return false
        }
        return dbus_message_iter_close_container(&iter, &sub) != 0
    }
}
