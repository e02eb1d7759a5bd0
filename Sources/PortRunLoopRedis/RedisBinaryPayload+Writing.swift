import Foundation
import PortRunLoopBus

extension RedisBinaryPayload {
    /// Writes a notification's payload into a buffer it was given, straight from the userInfo
    /// property list (no intermediate values): the same types, the same order of checks and the same
    /// typed errors as `PropertyListCoding.encode(userInfo:)`, the D-Bus transport's mapping.
    ///
    /// It writes through a raw pointer (no per-append capacity and uniqueness checks of an array)
    /// and counts every byte it is asked for, also those past the buffer's end, which it does not
    /// write: a pass that outgrows its buffer learns the exact size the second pass needs
    /// (``PendingPublish``), so a payload is never written twice unless it outgrew the estimate.
    ///
    /// Thread-safety: a value type over a borrowed buffer, used by one thread while it is valid.
    package struct Writer {
        private let base: UnsafeMutableRawPointer?
        private let capacity: Int
        /// Bytes asked for so far, written or not.
        package private(set) var count = 0

        package init(_ buffer: UnsafeMutableRawBufferPointer) {
            base = buffer.baseAddress
            capacity = buffer.count
        }

        /// Whether some byte asked for did not fit (then none after it was written either).
        package var overflowed: Bool { count > capacity }

        /// The error of a value with no property-list form: the key path (innermost last) and its type.
        struct Unsupported: Error {
            var path: [String]
            let type: String

            var error: BusNotificationError {
                var text = ""
                for component in path.reversed() {
                    if !text.isEmpty, !component.hasPrefix("[") { text += "." }
                    text += component
                }
                return .unsupportedUserInfoValue(keyPath: text, type: type)
            }
        }

        /// The payload for `envelope` (its name is the channel's, not repeated).
        package mutating func appendPayload(of envelope: NotificationEnvelope, sender: String) throws(BusNotificationError) {
            append(formatByte)
            var flags: UInt8 = envelope.deliverImmediately ? Flag.deliverImmediately : 0
            if envelope.object != nil { flags |= Flag.hasObject }
            append(flags)
            appendString(sender)
            if let object = envelope.object { appendString(object) }
            switch envelope.payload {
            case .none: appendLength(0)
            case .fields(let fields), .both(let fields, _):
                do {
                    try appendFields(fields, depth: 0)
                } catch {
                    throw error.error
                }
            case .propertyList(let userInfo):
                do {
                    try appendEntries(of: userInfo, depth: 0)
                } catch {
                    throw error.error
                }
            }
        }

        /// The error of a container nested deeper than a reader takes (``maximumDepth``).
        private static func tooDeep() -> Unsupported {
            Unsupported(path: [], type: "a value nested deeper than \(maximumDepth) containers")
        }

        /// Fields, in their order (every value has a binary form: only nesting deeper than a
        /// reader takes fails), their values inside `depth` containers.
        private mutating func appendFields(_ fields: BusFields, depth: Int) throws(Unsupported) {
            appendLength(fields.count)
            for field in fields {
                appendString(field.key)
                do {
                    try appendField(field.value, depth: depth)
                } catch {
                    var error = error
                    error.path.append(field.key)
                    throw error
                }
            }
        }

        private mutating func appendField(_ value: BusFieldValue, depth: Int) throws(Unsupported) {
            switch value {
            case .string(let v):
                append(Tag.string)
                appendString(v)
            case .bool(let v): append(v ? Tag.true : Tag.false)
            case .int(let v): appendWord(Tag.int, UInt64(bitPattern: Int64(v)))
            case .unsignedInt(let v): appendWord(v <= UInt64(Int64.max) ? Tag.int : Tag.uint, v)
            case .double(let v): appendWord(Tag.double, v.bitPattern)
            case .data(let v):
                append(Tag.data)
                appendLength(v.count)
                v.withUnsafeBytes { append($0) }
            case .array(let items):
                guard depth < maximumDepth else { throw Self.tooDeep() }
                append(Tag.array)
                appendLength(items.count)
                for (index, item) in items.enumerated() {
                    do {
                        try appendField(item, depth: depth + 1)
                    } catch {
                        var error = error
                        error.path.append("[\(index)]")
                        throw error
                    }
                }
            case .dictionary(let fields):
                guard depth < maximumDepth else { throw Self.tooDeep() }
                append(Tag.dictionary)
                try appendFields(fields, depth: depth + 1)
            }
        }

        @inline(__always)
        mutating func append(_ byte: UInt8) {
            if count < capacity, let base { base.storeBytes(of: byte, toByteOffset: count, as: UInt8.self) }
            count += 1
        }

        @inline(__always)
        mutating func append(_ bytes: UnsafeRawBufferPointer) {
            if bytes.count <= capacity - count, let base, let source = bytes.baseAddress {
                (base + count).copyMemory(from: source, byteCount: bytes.count)
            }
            count += bytes.count
        }

        mutating func append(_ text: StaticString) {
            append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }

        mutating func appendLength(_ length: Int) {
            withUnsafeBytes(of: UInt32(truncatingIfNeeded: length).littleEndian) { append($0) }
        }

        mutating func appendString(_ string: String) {
            // A native string's bytes in place (no copy, no retain); another (bridged) made native.
            if string.utf8.withContiguousStorageIfAvailable({ appendLengthAndBytes($0) }) != nil { return }
            var string = string
            string.withUTF8 { appendLengthAndBytes($0) }
        }

        private mutating func appendLengthAndBytes(_ utf8: UnsafeBufferPointer<UInt8>) {
            appendLength(utf8.count)
            append(UnsafeRawBufferPointer(utf8))
        }

        private mutating func appendWord(_ tag: UInt8, _ word: UInt64) {
            append(tag)
            withUnsafeBytes(of: word.littleEndian) { append($0) }
        }

        private mutating func appendEntries(of dictionary: [AnyHashable: Any], depth: Int) throws(Unsupported) {
            appendLength(dictionary.count)
            for (key, item) in dictionary {
                guard let name = PropertyListScalar.key(key) else {
                    throw Unsupported(path: ["\(key)"], type: "key of type \(type(of: key.base))")
                }
                appendString(name)
                do {
                    try appendValue(item, depth: depth)
                } catch {
                    var error = error
                    error.path.append(name)
                    throw error
                }
            }
        }

        /// One value inside `depth` containers: exact common types first (no bridging cast is
        /// tried for them), then the D-Bus mapping's order of checks.
        mutating func appendValue(_ value: Any, depth: Int) throws(Unsupported) {
            if let scalar = PropertyListScalar(value) {
                switch scalar {
                case .string(let v):
                    append(Tag.string)
                    appendString(v)
                case .bool(let v): append(v ? Tag.true : Tag.false)
                case .signed(let v): appendWord(Tag.int, UInt64(bitPattern: v))
                case .unsigned(let v): appendWord(Tag.uint, v)
                case .double(let v): appendWord(Tag.double, v.bitPattern)
                case .data(let v):
                    append(Tag.data)
                    appendLength(v.count)
                    v.withUnsafeBytes { append($0) }
                }
                return
            }
            switch value {
            case let v as [Any]:
                guard depth < maximumDepth else { throw Self.tooDeep() }
                append(Tag.array)
                appendLength(v.count)
                for (index, item) in v.enumerated() {
                    do {
                        try appendValue(item, depth: depth + 1)
                    } catch {
                        var error = error
                        error.path.append("[\(index)]")
                        throw error
                    }
                }
            case let v as [String: Any]:
                guard depth < maximumDepth else { throw Self.tooDeep() }
                append(Tag.dictionary)
                appendLength(v.count)
                for (key, item) in v {
                    appendString(key)
                    do {
                        try appendValue(item, depth: depth + 1)
                    } catch {
                        var error = error
                        error.path.append(key)
                        throw error
                    }
                }
            case let v as [AnyHashable: Any]:
                guard depth < maximumDepth else { throw Self.tooDeep() }
                append(Tag.dictionary)
                try appendEntries(of: v, depth: depth + 1)
            default:
                throw Unsupported(path: [], type: "\(type(of: value))")
            }
        }
    }
}
