import CDBus
import Foundation

/// Reads a `Posted` signal (``NotificationWireFormat``) straight from libdbus' message into the
/// ``NotificationEnvelope`` observers receive: no ``BusValue`` tree in between, and no dictionary
/// for an empty userInfo.
///
/// It accepts the signatures ``NotificationWireFormat`` names (`ss`, `ssa{s*}` or `ssa{s*}b`,
/// checked first), then a non-empty name, then userInfo values each with a property-list form (as
/// ``PropertyListCoding`` decodes them).
///
/// Thread-safety: a stateless namespace; the message must not be shared while it is read.
package enum NotificationSignalReader {
    /// The envelope `message` carries, or why it is not one.
    package static func envelope(from message: OpaquePointer) -> Result<NotificationEnvelope, MalformedNotification> {
        guard let signature = dbus_message_get_signature(message), hasNotificationShape(signature) else {
            return .failure(.signature)
        }
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else { return .failure(.signature) }
        // The shape is known: s, s, then optionally a{s…}, then optionally b.
        let name = string(&iter)
        guard !name.isEmpty else { return .failure(.emptyName) }
        dbus_message_iter_next(&iter)
        let object = string(&iter)
        var payload = NotificationEnvelope.Payload.none
        var immediately = false
        if dbus_message_iter_next(&iter) != 0 {
            var entries = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &entries)
            if dbus_message_iter_get_arg_type(&entries) == DBusTypeCode.dictEntry {
                var foreignKeys = false
                guard let fields = fields(&entries, foreignKeys: &foreignKeys) else { return .failure(.userInfo) }
                if foreignKeys {
                    // A dictionary inside keyed by something else than strings: its property-list
                    // form is read as such (``value(_:)``), not made from the fields' array.
                    var again = DBusMessageIter()
                    dbus_message_iter_recurse(&iter, &again)
                    guard let dictionary = propertyList(&again) else { return .failure(.userInfo) }
                    payload = .both(fields, dictionary)
                } else {
                    payload = .fields(fields)
                }
            }
            if dbus_message_iter_next(&iter) != 0 {
                var flag: dbus_bool_t = 0
                dbus_message_iter_get_basic(&iter, &flag)
                immediately = flag != 0
            }
        }
        return .success(NotificationEnvelope(name: name, object: object.isEmpty ? nil : object,
                                             payload: payload, deliverImmediately: immediately))
    }

    /// Room reserved for a container's elements before they are read: libdbus counts a
    /// container's elements only by walking them (`dbus_message_iter_get_element_count`, ~1,800
    /// instructions for a two-entry userInfo, a fifth of the whole read), so a container is read
    /// once, into storage that grows past this when it must.
    private static let expectedElements = 4

    /// The `{s…}` entries from `iter` on as fields (a key given twice: the later value), or nil
    /// when a value has no property-list form. `foreignKeys` is set when a dictionary inside is
    /// keyed by something else than strings.
    private static func fields(_ iter: inout DBusMessageIter, foreignKeys: inout Bool) -> BusFields? {
        var entries: [BusFields.Element] = []
        entries.reserveCapacity(expectedElements)
        let complete = forEachEntry(&iter) { key, pair in
            guard let value = fieldValue(&pair, foreignKeys: &foreignKeys) else { return false }
            entries.append((key, value))
            return true
        }
        return complete ? BusFields(readEntries: entries) : nil
    }

    /// The field value `iter` is at (the property-list mapping, as ``value(_:)``), or nil for a
    /// value with no property-list form.
    private static func fieldValue(_ iter: inout DBusMessageIter, foreignKeys: inout Bool) -> BusFieldValue? {
        switch dbus_message_iter_get_arg_type(&iter) {
        case DBusTypeCode.string, DBusTypeCode.objectPath, DBusTypeCode.signature: return .string(string(&iter))
        case DBusTypeCode.boolean: return .bool(basic(&iter, dbus_bool_t(0)) != 0)
        case DBusTypeCode.byte: return .int(Int(basic(&iter, UInt8(0))))
        case DBusTypeCode.int16: return .int(Int(basic(&iter, Int16(0))))
        case DBusTypeCode.uint16: return .int(Int(basic(&iter, UInt16(0))))
        case DBusTypeCode.int32: return .int(Int(basic(&iter, Int32(0))))
        case DBusTypeCode.uint32: return .int(Int(basic(&iter, UInt32(0))))
        case DBusTypeCode.int64: return .int(Int(basic(&iter, Int64(0))))
        case DBusTypeCode.uint64:
            let v = basic(&iter, UInt64(0))
            return v <= UInt64(Int.max) ? .int(Int(v)) : .unsignedInt(v)
        case DBusTypeCode.double: return .double(basic(&iter, Double(0)))
        case DBusTypeCode.variant:
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &inner)
            return fieldValue(&inner, foreignKeys: &foreignKeys)
        case DBusTypeCode.structure:
            var items = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &items)
            return fieldList(&items, foreignKeys: &foreignKeys).map { .array($0) }
        case DBusTypeCode.array:
            let element = dbus_message_iter_get_element_type(&iter)
            var items = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &items)
            if element == DBusTypeCode.byte { return .data(bytes(&items)) }
            guard element == DBusTypeCode.dictEntry else {
                return fieldList(&items, foreignKeys: &foreignKeys).map { .array($0) }
            }
            guard let stringKeys = hasStringKeys(dictionary: &iter, entries: &items) else { return nil }
            if stringKeys { return fields(&items, foreignKeys: &foreignKeys).map { .dictionary($0) } }
            // Keys of another type: keys and values alternating (see BusFieldValue.array).
            foreignKeys = true
            var alternating: [BusFieldValue] = []
            alternating.reserveCapacity(2 * expectedElements)
            while dbus_message_iter_get_arg_type(&items) == DBusTypeCode.dictEntry {
                var pair = DBusMessageIter()
                dbus_message_iter_recurse(&items, &pair)
                guard let key = fieldValue(&pair, foreignKeys: &foreignKeys) else { return nil }
                dbus_message_iter_next(&pair)
                guard let item = fieldValue(&pair, foreignKeys: &foreignKeys) else { return nil }
                alternating += [key, item]
                dbus_message_iter_next(&items)
            }
            return .array(alternating)
        default:
            return nil
        }
    }

    /// The field values from `iter` to the end of its container.
    private static func fieldList(_ iter: inout DBusMessageIter, foreignKeys: inout Bool) -> [BusFieldValue]? {
        var out: [BusFieldValue] = []
        out.reserveCapacity(expectedElements)
        while dbus_message_iter_get_arg_type(&iter) != DBusTypeCode.invalid {
            guard let item = fieldValue(&iter, foreignKeys: &foreignKeys) else { return nil }
            out.append(item)
            dbus_message_iter_next(&iter)
        }
        return out
    }

    /// The `{s…}` entries from `iter` on as a property list (a key given twice: the later value).
    private static func propertyList(_ iter: inout DBusMessageIter) -> [AnyHashable: Any]? {
        var result: [AnyHashable: Any] = [:]
        let complete = forEachEntry(&iter) { key, pair in
            guard let item = value(&pair) else { return false }
            result[key] = item
            return true
        }
        return complete ? result : nil
    }

    /// Calls `body` with each `{s…}` entry's key and an iterator at its value, from `iter` to the
    /// end of its container; false as soon as `body` returns false.
    private static func forEachEntry(_ iter: inout DBusMessageIter, _ body: (String, inout DBusMessageIter) -> Bool) -> Bool {
        while dbus_message_iter_get_arg_type(&iter) == DBusTypeCode.dictEntry {
            var pair = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &pair)
            let key = string(&pair)
            dbus_message_iter_next(&pair)
            guard body(key, &pair) else { return false }
            dbus_message_iter_next(&iter)
        }
        return true
    }

    /// Whether a message signature is `ss`, `ssa{s<one type>}` or `ssa{s<one type>}b`.
    static func hasNotificationShape(_ signature: UnsafePointer<CChar>) -> Bool {
        let length = strlen(signature)
        guard length >= 2, signature[0] == CChar(UInt8(ascii: "s")), signature[1] == CChar(UInt8(ascii: "s")) else { return false }
        if length == 2 { return true }
        guard length >= 7, strncmp(signature + 2, "a{s", 3) == 0 else { return false }
        // The dictionary's value is one complete type: the entry's `}` is where the braces balance.
        var depth = 1
        var index = 5
        while index < length {
            switch UInt8(bitPattern: signature[index]) {
            case UInt8(ascii: "{"), UInt8(ascii: "("): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: ")"): depth -= 1
            default: break
            }
            if depth == 0 { break }
            index += 1
        }
        guard depth == 0, index > 5 else { return false }
        let rest = length - index - 1
        return rest == 0 || (rest == 1 && signature[index + 1] == CChar(UInt8(ascii: "b")))
    }

    /// The string, object path or signature `iter` is at.
    private static func string(_ iter: inout DBusMessageIter) -> String {
        var pointer: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&iter, &pointer)
        return pointer.map { String(cString: $0) } ?? ""
    }

    private static func basic<T: BitwiseCopyable>(_ iter: inout DBusMessageIter, _ zero: T) -> T {
        var value = zero
        withUnsafeMutablePointer(to: &value) { dbus_message_iter_get_basic(&iter, UnsafeMutableRawPointer($0)) }
        return value
    }

    /// The property-list value `iter` is at (``PropertyListCoding``'s decoding), or nil for a value
    /// with no property-list form (a Unix fd, say).
    static func value(_ iter: inout DBusMessageIter) -> Any? {
        switch dbus_message_iter_get_arg_type(&iter) {
        case DBusTypeCode.string, DBusTypeCode.objectPath, DBusTypeCode.signature: return string(&iter)
        case DBusTypeCode.boolean: return basic(&iter, dbus_bool_t(0)) != 0
        case DBusTypeCode.byte: return Int(basic(&iter, UInt8(0)))
        case DBusTypeCode.int16: return Int(basic(&iter, Int16(0)))
        case DBusTypeCode.uint16: return Int(basic(&iter, UInt16(0)))
        case DBusTypeCode.int32: return Int(basic(&iter, Int32(0)))
        case DBusTypeCode.uint32: return Int(basic(&iter, UInt32(0)))
        case DBusTypeCode.int64: return Int(basic(&iter, Int64(0)))
        case DBusTypeCode.uint64:
            let v = basic(&iter, UInt64(0))
            return v <= UInt64(Int.max) ? Int(v) : v
        case DBusTypeCode.double: return basic(&iter, Double(0))
        case DBusTypeCode.variant:
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &inner)
            return value(&inner)
        case DBusTypeCode.structure:
            var fields = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &fields)
            return list(&fields)
        case DBusTypeCode.array:
            return array(&iter)
        default:
            return nil
        }
    }

    /// An array value: `ay` → `Data`, dictionaries → `[String: Any]` (other key types:
    /// `[AnyHashable: Any]`), anything else → `[Any]`.
    private static func array(_ iter: inout DBusMessageIter) -> Any? {
        let element = dbus_message_iter_get_element_type(&iter)
        var items = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &items)
        if element == DBusTypeCode.byte { return bytes(&items) }
        guard element == DBusTypeCode.dictEntry else { return list(&items) }
        guard let stringKeys = hasStringKeys(dictionary: &iter, entries: &items) else { return nil }
        if stringKeys {
            var out: [String: Any] = Dictionary(minimumCapacity: expectedElements)
            let complete = forEachEntry(&items) { key, pair in
                guard let item = value(&pair) else { return false }
                out[key] = item
                return true
            }
            return complete ? out : nil
        }
        var out: [AnyHashable: Any] = Dictionary(minimumCapacity: expectedElements)
        while dbus_message_iter_get_arg_type(&items) == DBusTypeCode.dictEntry {
            var pair = DBusMessageIter()
            dbus_message_iter_recurse(&items, &pair)
            guard let key = value(&pair) as? AnyHashable else { return nil }
            dbus_message_iter_next(&pair)
            guard let item = value(&pair) else { return nil }
            out[key] = item
            dbus_message_iter_next(&items)
        }
        return out
    }

    /// The bytes of the `ay` whose elements `items` is at, read as one block.
    private static func bytes(_ items: inout DBusMessageIter) -> Data {
        var pointer: UnsafeMutableRawPointer?
        var count: Int32 = 0
        dbus_message_iter_get_fixed_array(&items, &pointer, &count)
        return pointer.map { Data(bytes: $0, count: Int(count)) } ?? Data()
    }

    /// Whether the dictionary `iter` is at (its entries at `entries`) has string keys: the first
    /// character after `a{` of its signature, read off an entry's key, or, for an empty
    /// dictionary, off the signature (which libdbus allocates). Nil when libdbus could not.
    private static func hasStringKeys(dictionary iter: inout DBusMessageIter, entries: inout DBusMessageIter) -> Bool? {
        if dbus_message_iter_get_arg_type(&entries) == DBusTypeCode.dictEntry {
            var pair = DBusMessageIter()
            dbus_message_iter_recurse(&entries, &pair)
            return dbus_message_iter_get_arg_type(&pair) == DBusTypeCode.string
        }
        guard let signature = dbus_message_iter_get_signature(&iter) else { return nil }
        defer { dbus_free(signature) }
        return signature[2] == CChar(UInt8(ascii: "s"))
    }

    /// The values from `iter` to the end of its container.
    private static func list(_ iter: inout DBusMessageIter) -> [Any]? {
        var out: [Any] = []
        out.reserveCapacity(expectedElements)
        while dbus_message_iter_get_arg_type(&iter) != DBusTypeCode.invalid {
            guard let item = value(&iter) else { return nil }
            out.append(item)
            dbus_message_iter_next(&iter)
        }
        return out
    }
}
