import Foundation
import PortRunLoopBus

/// A notification's whole `PUBLISH` command in Redis' protocol (RESP), built on the posting thread
/// in one buffer, so that the loop only copies it into hiredis' output
/// (`redisAsyncFormattedCommand`):
///
///     *3\r\n$7\r\nPUBLISH\r\n$<channel length>\r\n<channel>\r\n$<payload length>\r\n<payload>\r\n
///
/// or, for a durable name (``RedisDurableNotifications``), the `XADD` that appends it to the
/// name's stream, the payload in the field `payload`:
///
///     *8\r\n$4\r\nXADD\r\n$<key length>\r\n<key>\r\n$6\r\nMAXLEN\r\n$1\r\n~\r\n$<digits>\r\n<maximum length>\r\n
///     $1\r\n*\r\n$7\r\npayload\r\n$<payload length>\r\n<payload>\r\n
///
/// The payload is written in place after room for its length's digits; the header is then moved
/// up against the digits, and the command starts at ``start``.
///
/// Thread-safety: a value type over bytes no one writes once it is made.
struct PendingPublish: Sendable {
    /// `nonisolated(unsafe)`: `ManagedBuffer` is never `Sendable`; this one is written only while
    /// the value is made, on the posting thread, and only read once it exists.
    nonisolated(unsafe) private let storage: Storage
    /// Where the command starts in the storage, and where it ends.
    private let start: Int
    private let end: Int

    /// The command's bytes, tail-allocated in one object: one allocation, and none of the runtime
    /// lookups of `_ContiguousArrayStorage<UInt8>`'s generic metadata that making a `[UInt8]` of a
    /// given capacity costs outside the standard library.
    ///
    /// Thread-safety: not `Sendable` (no `ManagedBuffer` is); written only while its
    /// ``PendingPublish`` is made, on the posting thread, and read-only once that value exists.
    private final class Storage: ManagedBuffer<Void, UInt8> {
        static func make(capacity: Int) -> Storage {
            unsafeDowncast(create(minimumCapacity: capacity) { _ in }, to: Storage.self)
        }
    }

    /// Digits kept for the payload's length (``RedisBinaryPayload/maximumSize`` has 8).
    private static let lengthDigits = 8

    /// The command for `envelope` (an `XADD` trimmed to about `streamLength` entries when given,
    /// else a `PUBLISH`), its payload in `format`; a userInfo value with no property-list
    /// form, or a payload over ``RedisBinaryPayload/maximumSize``, is the typed error the D-Bus
    /// transport throws for a value it cannot carry.
    ///
    /// The command is written into a buffer of an estimated size; a command that outgrows it is
    /// written once more into one of the exact size the first pass counted (a payload over the
    /// limit is refused before that second buffer is made).
    init(_ envelope: NotificationEnvelope, sender: String, format: RedisPayloadFormat,
         streamLength: Int? = nil) throws(BusNotificationError) {
        let json = format == .json ? try RedisWireFormat.payload(for: envelope, sender: sender) : nil
        let estimate = 64 + RedisChannelNaming.prefixBytes.utf8CodeUnitCount + envelope.name.utf8.count + sender.utf8.count
            + (envelope.object?.utf8.count ?? 0) + 32 * envelope.userInfoCount + (json?.count ?? 0)
            + (streamLength == nil ? 0 : 64)
        var capacity = estimate
        while true {
            let storage = Storage.make(capacity: capacity)
            let written = try storage.withUnsafeMutablePointerToElements { elements throws(BusNotificationError) in
                try Self.write(envelope, sender: sender, json: json, streamLength: streamLength,
                               into: UnsafeMutableRawBufferPointer(start: elements, count: capacity))
            }
            guard written.payload <= RedisBinaryPayload.maximumSize else {
                throw .unsupportedUserInfoValue(keyPath: "",
                                                type: "a payload of \(written.payload) bytes (at most \(RedisBinaryPayload.maximumSize))")
            }
            if written.count <= capacity {
                self.storage = storage
                start = written.start
                end = written.count
                return
            }
            capacity = written.count
        }
    }

    /// Writes the command into `buffer`: the bytes it needs (written only when they fit), the
    /// payload's length, and where the command starts. The payload is written after room for
    /// ``lengthDigits`` digits; once its length is known the digits are filled in and the header
    /// moved up against them.
    private static func write(_ envelope: NotificationEnvelope, sender: String, json: Data?, streamLength: Int?,
                              into buffer: UnsafeMutableRawBufferPointer) throws(BusNotificationError) -> (count: Int, payload: Int, start: Int) {
        var writer = RedisBinaryPayload.Writer(buffer)
        writer.append(streamLength == nil ? "*3\r\n$7\r\nPUBLISH\r\n$" : "*8\r\n$4\r\nXADD\r\n$")
        var name = envelope.name
        name.withUTF8 { utf8 in
            appendDecimal(RedisChannelNaming.prefixBytes.utf8CodeUnitCount + utf8.count, to: &writer)
            writer.append("\r\n")
            writer.append(RedisChannelNaming.prefixBytes)
            writer.append(UnsafeRawBufferPointer(utf8))
        }
        if let streamLength {
            writer.append("\r\n$6\r\nMAXLEN\r\n$1\r\n~\r\n$")
            appendDecimal(decimalDigits(streamLength), to: &writer)
            writer.append("\r\n")
            appendDecimal(streamLength, to: &writer)
            writer.append("\r\n$1\r\n*\r\n$7\r\npayload")
        }
        writer.append("\r\n$")
        let lengthAt = writer.count
        for _ in 0..<lengthDigits { writer.append(UInt8(ascii: "0")) } // room, filled in below
        writer.append("\r\n")
        let payloadAt = writer.count
        if let json {
            json.withUnsafeBytes { writer.append($0) }
        } else {
            try writer.appendPayload(of: envelope, sender: sender)
        }
        let length = writer.count - payloadAt
        writer.append("\r\n")
        guard !writer.overflowed, length <= RedisBinaryPayload.maximumSize, let base = buffer.baseAddress else {
            return (writer.count, length, 0)
        }
        let digits = decimalDigits(length)
        let start = lengthDigits - digits
        var lengthWriter = RedisBinaryPayload.Writer(UnsafeMutableRawBufferPointer(start: base + lengthAt + start, count: digits))
        appendDecimal(length, to: &lengthWriter)
        if start > 0 {
            memmove(base + start, base, lengthAt)
        }
        return (writer.count, length, start)
    }

    /// The command's bytes.
    func withCommand<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        storage.withUnsafeMutablePointerToElements { body(UnsafeRawBufferPointer(start: $0 + start, count: end - start)) }
    }

    /// How many decimal digits `value` (≥ 0) has.
    private static func decimalDigits(_ value: Int) -> Int {
        var digits = 1
        var rest = value
        while rest >= 10 {
            digits += 1
            rest /= 10
        }
        return digits
    }

    private static func appendDecimal(_ value: Int, to writer: inout RedisBinaryPayload.Writer) {
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            writer.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}
