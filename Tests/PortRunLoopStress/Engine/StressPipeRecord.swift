/// The 8-byte records the stress engine writes into its pipes: the writer (a producer index, or
/// ``canceller`` for the bytes a canceller writes to leave the fd ready) in the top 8 bits of the
/// first little-endian word, a per-writer sequence number in its low 24 bits, and a checksum word.
/// 8 bytes are below `PIPE_BUF`, so a pipe write of one record is atomic; the verifier compares
/// bytes, and decodes records only to describe a difference.
///
/// Thread-safety: pure functions.
enum StressPipeRecord {
    static let size = 8
    /// The writer index of a canceller (producer indices stop at 254).
    static let canceller = 255

    static func bytes(writer: Int, seq: Int) -> [UInt8] {
        let head = UInt32(writer & 0xFF) << 24 | UInt32(seq & 0xFF_FFFF)
        let check = StressTag.checksum(producer: writer, seq: seq & 0xFF_FFFF)
        return (0..<4).map { UInt8(truncatingIfNeeded: head >> (8 * $0)) }
            + (0..<4).map { UInt8(truncatingIfNeeded: check >> (8 * $0)) }
    }

    /// Describes the record starting at `offset` of `stream` ("p2#17", "canceller#4", or what is
    /// wrong with it).
    static func describe(_ stream: [UInt8], at offset: Int) -> String {
        guard offset >= 0, offset + size <= stream.count else { return "a partial record" }
        let word = { (at: Int) in (0..<4).reduce(UInt32(0)) { $0 | UInt32(stream[offset + at + $1]) << (8 * $1) } }
        let head = word(0), check = word(4)
        let writer = Int(head >> 24), seq = Int(head & 0xFF_FFFF)
        let name = writer == canceller ? "canceller#\(seq)" : "p\(writer)#\(seq)"
        return check == StressTag.checksum(producer: writer, seq: seq) ? name : "\(name) with a bad checksum"
    }
}
