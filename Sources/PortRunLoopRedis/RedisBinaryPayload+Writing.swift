import Foundation
@_spi(Transport) import PortRunLoopDBus

extension RedisBinaryPayload {
    /// Appends a notification's payload to a buffer, straight from the userInfo property list (no
    /// intermediate values): the same types, the same order of checks and the same typed errors as
    /// `PropertyListCoding.encode(userInfo:)`, the D-Bus transport's mapping.
    ///
    /// Thread-safety: a value type, used by one thread.
    struct Writer {
        var bytes: [UInt8]

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
        mutating func appendPayload(of envelope: NotificationEnvelope, sender: String) throws(BusNotificationError) {
            bytes.append(formatByte)
            var flags: UInt8 = envelope.deliverImmediately ? Flag.deliverImmediately : 0
            if envelope.object != nil { flags |= Flag.hasObject }
            bytes.append(flags)
            appendString(sender)
            if let object = envelope.object { appendString(object) }
            guard let userInfo = envelope.userInfo else {
                appendLength(0)
                return
            }
            do {
                try appendEntries(of: userInfo, count: userInfo.count)
            } catch {
                throw error.error
            }
        }

        mutating func appendLength(_ length: Int) {
            let value = UInt32(truncatingIfNeeded: length).littleEndian
            withUnsafeBytes(of: value) { bytes.append(contentsOf: $0) }
        }

        mutating func appendString(_ string: String) {
            var string = string
            string.withUTF8 { utf8 in
                appendLength(utf8.count)
                bytes.append(contentsOf: utf8)
            }
        }

        private mutating func appendWord(_ tag: UInt8, _ word: UInt64) {
            bytes.append(tag)
            withUnsafeBytes(of: word.littleEndian) { bytes.append(contentsOf: $0) }
        }

        private mutating func appendEntries(of dictionary: [AnyHashable: Any], count: Int) throws(Unsupported) {
            appendLength(count)
            for (key, item) in dictionary {
                guard let name = key.base as? String else {
                    throw Unsupported(path: ["\(key)"], type: "key of type \(type(of: key.base))")
                }
                appendString(name)
                do {
                    try appendValue(item)
                } catch {
                    var error = error
                    error.path.append(name)
                    throw error
                }
            }
        }

        /// One value: exact common types first (no bridging cast is tried for them), then the
        /// D-Bus mapping's order of checks.
        mutating func appendValue(_ value: Any) throws(Unsupported) {
            if let scalar = PropertyListScalar(value) {
                switch scalar {
                case .string(let v):
                    bytes.append(Tag.string)
                    appendString(v)
                case .bool(let v): bytes.append(v ? Tag.true : Tag.false)
                case .signed(let v): appendWord(Tag.int, UInt64(bitPattern: v))
                case .unsigned(let v): appendWord(Tag.uint, v)
                case .double(let v): appendWord(Tag.double, v.bitPattern)
                case .data(let v):
                    bytes.append(Tag.data)
                    appendLength(v.count)
                    bytes.append(contentsOf: v)
                }
                return
            }
            switch value {
            case let v as [Any]:
                bytes.append(Tag.array)
                appendLength(v.count)
                for (index, item) in v.enumerated() {
                    do {
                        try appendValue(item)
                    } catch {
                        var error = error
                        error.path.append("[\(index)]")
                        throw error
                    }
                }
            case let v as [String: Any]:
                bytes.append(Tag.dictionary)
                appendLength(v.count)
                for (key, item) in v {
                    appendString(key)
                    do {
                        try appendValue(item)
                    } catch {
                        var error = error
                        error.path.append(key)
                        throw error
                    }
                }
            case let v as [AnyHashable: Any]:
                bytes.append(Tag.dictionary)
                try appendEntries(of: v, count: v.count)
            default:
                throw Unsupported(path: [], type: "\(type(of: value))")
            }
        }

    }
}
