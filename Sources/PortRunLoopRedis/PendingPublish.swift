import Foundation
@_spi(Transport) import PortRunLoopDBus

/// A notification's whole `PUBLISH` command in Redis' protocol (RESP), built on the posting thread
/// in one buffer, so that the loop only copies it into hiredis' output
/// (`redisAsyncFormattedCommand`):
///
///     *3\r\n$7\r\nPUBLISH\r\n$<channel length>\r\n<channel>\r\n$<payload length>\r\n<payload>\r\n
///
/// The payload is written in place after room for its length's digits; the header is then moved
/// up against the digits, and the command starts at ``start``.
///
/// Thread-safety: a value type (bytes).
struct PendingPublish: Sendable {
    let bytes: [UInt8]
    let start: Int

    /// Digits kept for the payload's length (``RedisBinaryPayload/maximumSize`` has 8).
    private static let lengthDigits = 8

    /// The command for `envelope`, its payload in `format`; a userInfo value with no property-list
    /// form, or a payload over ``RedisBinaryPayload/maximumSize``, is the typed error the D-Bus
    /// transport throws for a value it cannot carry.
    init(_ envelope: NotificationEnvelope, sender: String, format: RedisPayloadFormat) throws(BusNotificationError) {
        var writer = RedisBinaryPayload.Writer(bytes: [])
        writer.bytes.reserveCapacity(96 + RedisChannelNaming.prefix.utf8.count + envelope.name.utf8.count + sender.utf8.count
                                     + (envelope.object?.utf8.count ?? 0) + 24 * (envelope.userInfo?.count ?? 0))
        Self.append("*3\r\n$7\r\nPUBLISH\r\n$", to: &writer.bytes)
        var name = envelope.name
        name.withUTF8 { utf8 in
            Self.append(decimal: RedisChannelNaming.prefix.utf8.count + utf8.count, to: &writer.bytes)
            Self.append("\r\n", to: &writer.bytes)
            Self.append(RedisChannelNaming.prefix, to: &writer.bytes)
            writer.bytes.append(contentsOf: utf8)
        }
        Self.append("\r\n$", to: &writer.bytes)
        let lengthAt = writer.bytes.count
        writer.bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: Self.lengthDigits))
        Self.append("\r\n", to: &writer.bytes)
        let payloadAt = writer.bytes.count
        switch format {
        case .binary:
            try writer.appendPayload(of: envelope, sender: sender)
        case .json:
            writer.bytes.append(contentsOf: try RedisWireFormat.payload(for: envelope, sender: sender))
        }
        let length = writer.bytes.count - payloadAt
        guard length <= RedisBinaryPayload.maximumSize else {
            throw .unsupportedUserInfoValue(keyPath: "", type: "a payload of \(length) bytes (at most \(RedisBinaryPayload.maximumSize))")
        }
        Self.append("\r\n", to: &writer.bytes)
        var digits = 0
        var rest = length
        repeat {
            digits += 1
            rest /= 10
        } while rest > 0
        let start = Self.lengthDigits - digits
        writer.bytes.withUnsafeMutableBytes { buffer in
            var value = length
            for index in stride(from: lengthAt + Self.lengthDigits - 1, through: lengthAt + start, by: -1) {
                buffer[index] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
            if start > 0, let base = buffer.baseAddress {
                memmove(base + start, base, lengthAt)
            }
        }
        bytes = writer.bytes
        self.start = start
    }

    /// The command's bytes.
    func withCommand<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start...])) }
    }

    private static func append(_ text: StaticString, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private static func append(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: text.utf8)
    }

    private static func append(decimal value: Int, to bytes: inout [UInt8]) {
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}
