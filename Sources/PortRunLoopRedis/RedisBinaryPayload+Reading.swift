import Foundation
import PortRunLoopBus

extension RedisBinaryPayload {
    /// Reads a binary payload straight into the envelope observers receive (no intermediate
    /// values; no dictionary for an empty userInfo), strictly: every length and count is checked
    /// against the bytes left before anything is read or reserved, strings must be UTF-8,
    /// dictionary keys unique, nesting at most ``maximumDepth``, and the payload must end exactly
    /// after its last entry. Whatever fails is a ``MalformedPayload``, never a trap.
    ///
    /// Thread-safety: a value type over borrowed bytes, used by one thread while they are valid.
    package struct Reader {
        private let bytes: UnsafeRawBufferPointer
        private var offset = 0

        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        /// The envelope named `name` (the channel's) that the payload describes.
        package static func envelope(name: String, payload: UnsafeRawBufferPointer) -> Result<NotificationEnvelope, MalformedPayload> {
            guard payload.count <= maximumSize else { return .failure(.binary("\(payload.count) bytes, more than \(maximumSize)")) }
            var reader = Reader(payload)
            do {
                return .success(try reader.envelope(name: name))
            } catch {
                return .failure(error)
            }
        }

        private mutating func envelope(name: String) throws(MalformedPayload) -> NotificationEnvelope {
            guard try byte() == formatByte else { throw .binary("format byte is not 0xB1") }
            let flags = try byte()
            guard flags & ~Flag.known == 0 else { throw .binary("unknown flags 0x\(String(flags, radix: 16))") }
            try skipSender()
            let object = flags & Flag.hasObject != 0 ? try string() : nil
            let count = try self.count(minimumBytesEach: 5)
            let fields = count > 0 ? try self.fields(count: count, depth: 0, at: nil) : nil
            guard offset == bytes.count else { throw .binary("\(bytes.count - offset) bytes after the last entry") }
            return NotificationEnvelope(name: name, object: object.flatMap { $0.isEmpty ? nil : $0 }, fields: fields,
                                        deliverImmediately: flags & Flag.deliverImmediately != 0)
        }

        /// `count` entries, keys unique (a key twice is malformed; `at`: the dictionary's byte,
        /// nil for the userInfo itself).
        private mutating func fields(count: Int, depth: Int, at: Int?) throws(MalformedPayload) -> BusFields {
            var entries: [BusFields.Element] = []
            entries.reserveCapacity(count)
            var keysAreASCII = true
            for _ in 0..<count {
                entries.append((try string(ascii: &keysAreASCII), try value(depth: depth)))
            }
            if let key = BusFields.repeatedKey(in: entries, keysAreASCII: keysAreASCII) {
                throw .binary(at.map { "dictionary key \"\(key)\" twice at byte \($0)" } ?? "userInfo key \"\(key)\" twice")
            }
            return BusFields(uniqueEntries: entries)
        }

        private mutating func value(depth: Int) throws(MalformedPayload) -> BusFieldValue {
            let at = offset
            switch try byte() {
            case Tag.string: return .string(try string())
            case Tag.int: return .int(Int(Int64(bitPattern: try word())))
            case Tag.uint:
                let v = try word()
                return v <= UInt64(Int.max) ? .int(Int(v)) : .unsignedInt(v)
            case Tag.double: return .double(Double(bitPattern: try word()))
            case Tag.false: return .bool(false)
            case Tag.true: return .bool(true)
            case Tag.data:
                let region = try span(try length())
                guard let base = region.baseAddress, !region.isEmpty else { return .data(Data()) }
                return .data(Data(bytes: base, count: region.count))
            case Tag.array:
                guard depth < maximumDepth else { throw .binary("nested deeper than \(maximumDepth) at byte \(at)") }
                let count = try self.count(minimumBytesEach: 1)
                var items: [BusFieldValue] = []
                items.reserveCapacity(count)
                for _ in 0..<count { items.append(try value(depth: depth + 1)) }
                return .array(items)
            case Tag.dictionary:
                guard depth < maximumDepth else { throw .binary("nested deeper than \(maximumDepth) at byte \(at)") }
                let count = try self.count(minimumBytesEach: 5)
                return .dictionary(try fields(count: count, depth: depth + 1, at: at))
            case let tag:
                throw .binary("unknown value tag 0x\(String(tag, radix: 16)) at byte \(at)")
            }
        }

        // The primitives below are inlined into the reader's few callers, each with its check: the
        // message of a failure is made out of line (`truncated(wanting:)`), so that the common
        // path is a compare, a load and an add.

        @inline(__always)
        private mutating func byte() throws(MalformedPayload) -> UInt8 {
            guard offset < bytes.count else { throw truncated(wanting: 1) }
            defer { offset += 1 }
            return bytes.load(fromByteOffset: offset, as: UInt8.self)
        }

        @inline(__always)
        private mutating func word() throws(MalformedPayload) -> UInt64 {
            let region = try span(8)
            return UInt64(littleEndian: region.loadUnaligned(as: UInt64.self))
        }

        @inline(__always)
        private mutating func length() throws(MalformedPayload) -> Int {
            let region = try span(4)
            return Int(UInt32(littleEndian: region.loadUnaligned(as: UInt32.self)))
        }

        /// A count of elements each at least `minimumBytesEach` long: more than the bytes left
        /// can hold is malformed before any storage is reserved for it.
        private mutating func count(minimumBytesEach: Int) throws(MalformedPayload) -> Int {
            let at = offset
            let count = try length()
            guard count <= (bytes.count - offset) / minimumBytesEach else {
                throw .binary("count \(count) at byte \(at) exceeds the \(bytes.count - offset) bytes left")
            }
            return count
        }

        /// The next `count` bytes (`count` ≥ 0: a length read is a `UInt32`).
        @inline(__always)
        private mutating func span(_ count: Int) throws(MalformedPayload) -> UnsafeRawBufferPointer {
            guard count <= bytes.count - offset else { throw truncated(wanting: count) }
            defer { offset += count }
            // In bounds as just checked, so without the slice's own checks.
            return UnsafeRawBufferPointer(start: bytes.baseAddress.map { $0 + offset }, count: count)
        }

        /// The error for `count` bytes wanted where fewer are left.
        @inline(never)
        private func truncated(wanting count: Int) -> MalformedPayload {
            .binary("\(count) bytes wanted at byte \(offset), \(bytes.count - offset) left")
        }

        private mutating func string() throws(MalformedPayload) -> String {
            var ascii = true
            return try string(ascii: &ascii)
        }

        /// A string; `ascii` is set to false when it is not ASCII (and left as it was otherwise).
        private mutating func string(ascii: inout Bool) throws(MalformedPayload) -> String {
            let at = offset
            let region = try span(try length())
            let utf8 = region.assumingMemoryBound(to: UInt8.self)
            // ASCII (the common case) is valid UTF-8 as it is: made without the generic validator.
            if isASCII(region) {
                // Copied in place: a short string (≤ 15 bytes, most keys and names) is then made
                // inline without the out-of-line validation `String(decoding:as:)` runs.
                return String(unsafeUninitializedCapacity: utf8.count) { $0.initialize(fromContentsOf: utf8) }
            }
            guard let string = String(validating: utf8, as: UTF8.self) else {
                throw .binary("a string at byte \(at) is not UTF-8")
            }
            ascii = false
            return string
        }

        /// The sender is checked (a length in bounds, UTF-8) but not kept: observers do not see it.
        private mutating func skipSender() throws(MalformedPayload) {
            let region = try span(try length())
            guard isUTF8(region) else { throw .binary("the sender is not UTF-8") }
        }
    }
}

/// Whether `bytes` are well-formed UTF-8 (without making a string of them): ASCII (a sender's
/// name, the common case) by a plain scan, anything else by the standard library's parser.
func isUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
    if isASCII(bytes) { return true }
    var parser = Unicode.UTF8.ForwardParser()
    var iterator = bytes.makeIterator()
    while true {
        switch parser.parseScalar(from: &iterator) {
        case .valid: continue
        case .emptyInput: return true
        case .error: return false
        }
    }
}

/// Whether every byte is below 0x80: eight bytes per load and test, then the rest one by one.
@inline(__always)
func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
    guard let base = bytes.baseAddress else { return true }
    var offset = 0
    while offset + 8 <= bytes.count {
        if base.loadUnaligned(fromByteOffset: offset, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
        offset += 8
    }
    while offset < bytes.count {
        if base.load(fromByteOffset: offset, as: UInt8.self) >= 0x80 { return false }
        offset += 1
    }
    return true
}
