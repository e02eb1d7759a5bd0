/// Reads structured values off fuzz bytes, front to back (libFuzzer's FuzzedDataProvider, in
/// small): a harness that builds a value tree or a set of fields from an input takes its choices
/// from here. Past the end every read gives zero or empty, so any input makes some value.
///
/// Thread-safety: a value over borrowed bytes, used by one thread while they are valid.
package struct FuzzInput {
    private let bytes: UnsafeRawBufferPointer
    private var offset = 0

    /// A reader at the start of `bytes`.
    package init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// Whether every byte was read.
    package var isAtEnd: Bool { offset >= bytes.count }

    /// The next byte (0 past the end).
    package mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// The next `size` bytes as a little-endian integer (zero-filled past the end).
    package mutating func integer<T: FixedWidthInteger>(_: T.Type = T.self) -> T {
        var value: T = 0
        for index in 0..<MemoryLayout<T>.size { value |= T(truncatingIfNeeded: byte()) << (8 * index) }
        return value
    }

    /// A count in `0...maximum`, from one byte.
    package mutating func count(upTo maximum: Int) -> Int { Int(byte()) % (maximum + 1) }

    /// Up to `maximum` bytes: a length byte, then that many bytes (fewer at the end).
    package mutating func bytes(upTo maximum: Int) -> [UInt8] {
        let length = count(upTo: maximum)
        let end = min(offset + length, bytes.count)
        defer { offset = max(offset, end) }
        return offset < end ? Array(bytes[offset..<end]) : []
    }

    /// ``bytes(upTo:)`` as a string (invalid UTF-8 repaired, as a peer's text would be).
    package mutating func string(upTo maximum: Int) -> String {
        String(decoding: bytes(upTo: maximum), as: UTF8.self)
    }
}
