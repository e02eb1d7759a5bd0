import CDBus
import Foundation

/// Reads a libdbus message's arguments as ``BusValue``s (libdbus has validated the message, so
/// nesting is bounded by the D-Bus limits).
///
/// Thread-safety: a stateless namespace; the message must not be shared while it is read.
package enum DBusMessageReader {
    /// The arguments of `message`, in order.
    package static func arguments(of message: OpaquePointer) -> [BusValue] {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else { return [] }
        return readAll(&iter)
    }

    private static func readAll(_ iter: inout DBusMessageIter) -> [BusValue] {
        var values: [BusValue] = []
        while dbus_message_iter_get_arg_type(&iter) != DBusTypeCode.invalid {
            values.append(read(&iter))
            dbus_message_iter_next(&iter)
        }
        return values
    }

    private static func basic<T: BitwiseCopyable>(_ iter: inout DBusMessageIter, _ zero: T) -> T {
        var value = zero
        withUnsafeMutablePointer(to: &value) { dbus_message_iter_get_basic(&iter, UnsafeMutableRawPointer($0)) }
        return value
    }

    private static func string(_ iter: inout DBusMessageIter) -> String {
        var pointer: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&iter, &pointer)
        return pointer.map { String(cString: $0) } ?? ""
    }

    /// The signature of the value `iter` is at.
    private static func signature(_ iter: inout DBusMessageIter) -> String {
        guard let raw = dbus_message_iter_get_signature(&iter) else { return "" }
        defer { dbus_free(raw) }
        return String(cString: raw)
    }

    static func read(_ iter: inout DBusMessageIter) -> BusValue {
        let type = dbus_message_iter_get_arg_type(&iter)
        switch type {
        case DBusTypeCode.byte: return .byte(basic(&iter, UInt8(0)))
        case DBusTypeCode.boolean: return .bool(basic(&iter, dbus_bool_t(0)) != 0)
        case DBusTypeCode.int16: return .int16(basic(&iter, Int16(0)))
        case DBusTypeCode.uint16: return .uint16(basic(&iter, UInt16(0)))
        case DBusTypeCode.int32: return .int32(basic(&iter, Int32(0)))
        case DBusTypeCode.uint32: return .uint32(basic(&iter, UInt32(0)))
        case DBusTypeCode.int64: return .int64(basic(&iter, Int64(0)))
        case DBusTypeCode.uint64: return .uint64(basic(&iter, UInt64(0)))
        case DBusTypeCode.double: return .double(basic(&iter, Double(0)))
        case DBusTypeCode.string: return .string(string(&iter))
        case DBusTypeCode.objectPath: return .objectPath(string(&iter))
        case DBusTypeCode.signature: return .signature(string(&iter))
        case DBusTypeCode.variant:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            return .variant(read(&sub))
        case DBusTypeCode.structure:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            return .structure(readAll(&sub))
        case DBusTypeCode.array:
            let full = signature(&iter)
            let element = String(full.dropFirst())
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            if dbus_message_iter_get_element_type(&iter) == DBusTypeCode.byte {
                var pointer: UnsafeMutableRawPointer?
                var count: Int32 = 0
                dbus_message_iter_get_fixed_array(&sub, &pointer, &count)
                return .bytes(pointer.map { Data(bytes: $0, count: Int(count)) } ?? Data())
            }
            if dbus_message_iter_get_element_type(&iter) == DBusTypeCode.dictEntry {
                var entries: [BusDictionaryEntry] = []
                while dbus_message_iter_get_arg_type(&sub) == DBusTypeCode.dictEntry {
                    var pair = DBusMessageIter()
                    dbus_message_iter_recurse(&sub, &pair)
                    let key = read(&pair)
                    dbus_message_iter_next(&pair)
                    let value = read(&pair)
                    entries.append(BusDictionaryEntry(key: key, value: value))
                    dbus_message_iter_next(&sub)
                }
                // element is "{kv}": the key is one basic type code.
                let inner = element.dropFirst().dropLast()
                return .dictionary(keySignature: String(inner.prefix(1)), valueSignature: String(inner.dropFirst()), entries)
            }
            return .array(elementSignature: element, readAll(&sub))
        default:
            return .unsupported(signature(&iter))
        }
    }
}
