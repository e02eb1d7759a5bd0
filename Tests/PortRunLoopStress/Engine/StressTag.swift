import Foundation

/// How the stress engine labels each item: the producer in a msgid's top 8 bits and the producer's
/// sequence number in the low 24; in logs, bit 31 of a sequence number marks an item that *must*
/// arrive (its target was neither retiring nor invalidated when it was accepted).
///
/// Thread-safety: pure functions.
enum StressTag {
    static let maxProducers = 255
    static let maxItems = 1 << 24 - 1
    static let mustBit: UInt32 = 1 << 31

    static func msgid(producer: Int, seq: Int) -> UInt32 { UInt32(producer) << 24 | UInt32(seq & 0xFF_FFFF) }
    static func producer(of msgid: UInt32) -> Int { Int(msgid >> 24) }
    static func seq(of msgid: UInt32) -> UInt32 { msgid & 0xFF_FFFF }

    /// 12 bytes: producer, seq and a checksum, so a torn or mixed-up payload is detected.
    static func payload(producer: Int, seq: Int) -> Data {
        var words: [UInt32] = [UInt32(producer), UInt32(seq), checksum(producer: producer, seq: seq)]
        return Data(bytes: &words, count: 12)
    }

    static func checksum(producer: Int, seq: Int) -> UInt32 {
        (UInt32(truncatingIfNeeded: producer) &* 0x9E37_79B1) ^ (UInt32(truncatingIfNeeded: seq) &* 0x85EB_CA77) ^ 0xC2B2_AE3D
    }

    /// Whether `data` is the payload of (`producer`, `seq`).
    static func verify(_ data: Data, producer: Int, seq: UInt32) -> Bool {
        guard data.count == 12 else { return false }
        let words = data.withUnsafeBytes { raw in (0..<3).map { raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self) } }
        return words[0] == UInt32(producer) && words[1] == seq && words[2] == checksum(producer: producer, seq: Int(seq))
    }
}
