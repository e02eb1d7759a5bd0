import CHiredis
import Foundation
import PortRunLoopBus
import PortRunLoopFuzzSupport
import PortRunLoopRedis

/// `fuzz-redis-payload`: what a Redis center reads from its subscribed connection. The first byte
/// picks the layer; the rest is its input.
///
/// - Even: a payload on the channel `portrunloop.notification.fuzz`
///   (``RedisWireFormat/envelope(channel:payload:names:)``: the binary form, or the JSON envelope).
///   An envelope read is written again, in the binary form and in JSON, and read back the same.
/// - Odd: the bytes the server sends (RESP), fed to hiredis' reader whole, one byte at a time and
///   in random pieces; each reply is classified as the subscribed connection does (``RedisPush``)
///   and each message's channel and payload read into an envelope. Every way of feeding gives the
///   same outcomes in the same order.
package enum RedisPayloadHarness: FuzzHarness {
    package static let targetName = "fuzz-redis-payload"
    package static let channel = RedisChannelNaming.channel(for: "fuzz")

    package static func run(_ bytes: UnsafeRawBufferPointer) throws(InvariantViolation) {
        guard let first = bytes.first else { return }
        let rest = UnsafeRawBufferPointer(rebasing: bytes[1...])
        if first & 1 == 0 {
            try payload(rest)
        } else {
            try stream(rest)
        }
    }

    /// One payload on the `fuzz` channel.
    private static func payload(_ bytes: UnsafeRawBufferPointer) throws(InvariantViolation) {
        var names = RedisChannelNaming.NameCache()
        let result = Array(channel.utf8).withUnsafeBytes { RedisWireFormat.envelope(channel: $0, payload: bytes, names: &names) }
        guard case .success(let envelope) = result else { return }
        try require(envelope.name == "fuzz", "an envelope read on the fuzz channel is named \(envelope.name)")
        let text = envelope.canonicalText
        // The binary form, written by the center's writer and read back.
        let binary = try binaryPayload(of: envelope)
        var again = RedisChannelNaming.NameCache()
        let reread = Array(channel.utf8).withUnsafeBytes { channel in
            binary.withUnsafeBytes { RedisWireFormat.envelope(channel: channel, payload: $0, names: &again) }
        }
        guard case .success(let binaryEnvelope) = reread else {
            throw InvariantViolation("the binary payload written for a read envelope is refused: \(reread)")
        }
        try require(binaryEnvelope.canonicalText == text, "binary round trip: \(text) became \(binaryEnvelope.canonicalText)")
        // The JSON envelope, written and read back.
        let json: Data
        do throws(BusNotificationError) {
            json = try RedisWireFormat.payload(for: envelope, sender: "fuzz")
        } catch {
            throw InvariantViolation("a read envelope cannot be written as JSON: \(error)")
        }
        let jsonRead = Array(channel.utf8).withUnsafeBytes { channel in
            json.withUnsafeBytes { RedisWireFormat.envelope(channel: channel, payload: $0, names: &again) }
        }
        guard case .success(let jsonEnvelope) = jsonRead else {
            throw InvariantViolation("the JSON written for a read envelope is refused: \(jsonRead) \(String(decoding: json, as: UTF8.self))")
        }
        try require(jsonEnvelope.canonicalText == text, "JSON round trip: \(text) became \(jsonEnvelope.canonicalText)")
    }

    /// The binary payload the center's writer makes for `envelope`.
    package static func binaryPayload(of envelope: NotificationEnvelope) throws(InvariantViolation) -> [UInt8] {
        var capacity = 256
        while true {
            var buffer = [UInt8](repeating: 0, count: capacity)
            let written: Result<Int, BusNotificationError> = buffer.withUnsafeMutableBytes { raw in
                var writer = RedisBinaryPayload.Writer(raw)
                do throws(BusNotificationError) {
                    try writer.appendPayload(of: envelope, sender: "fuzz")
                } catch {
                    return .failure(error)
                }
                return .success(writer.count)
            }
            switch written {
            case .failure(let error):
                throw InvariantViolation("a read envelope cannot be written in the binary form: \(error)")
            case .success(let count) where count <= capacity:
                return Array(buffer.prefix(count))
            case .success(let count):
                capacity = count
            }
        }
    }

    /// The server's bytes, fed to hiredis' reader in every plan.
    private static func stream(_ bytes: UnsafeRawBufferPointer) throws(InvariantViolation) {
        var expected: [String]?
        for cuts in ByteSplits.plans(for: bytes) {
            let outcomes = read(ByteSplits.pieces(of: bytes, cuts: cuts))
            if let expected {
                try require(outcomes == expected, "fed in \(cuts.count + 1) pieces: \(outcomes) instead of \(expected)")
            } else {
                expected = outcomes
            }
        }
    }

    /// The outcome of each reply the pieces make, as text (and the reader's error, if any).
    package static func read(_ pieces: [UnsafeRawBufferPointer]) -> [String] {
        guard let reader = redisReaderCreate() else { return ["out of memory"] }
        defer { redisReaderFree(reader) }
        RedisReplyLimit.install(on: reader) // as every connection's reader
        var outcomes: [String] = []
        var names = RedisChannelNaming.NameCache()
        for piece in pieces {
            guard redisReaderFeed(reader, piece.baseAddress?.assumingMemoryBound(to: CChar.self), piece.count) == REDIS_OK else {
                outcomes.append("feed refused")
                return outcomes
            }
            while true {
                var reply: UnsafeMutableRawPointer?
                guard redisReaderGetReply(reader, &reply) == REDIS_OK else {
                    outcomes.append("reader error \(reader.pointee.err)")
                    return outcomes
                }
                guard let reply else { break }
                defer { freeReplyObject(reply) }
                outcomes.append(outcome(of: reply.assumingMemoryBound(to: redisReply.self).pointee, names: &names))
            }
        }
        return outcomes
    }

    private static func outcome(of reply: redisReply, names: inout RedisChannelNaming.NameCache) -> String {
        switch RedisPush(reply) {
        case .message(let channel, let payload), .patternMessage(let channel, let payload):
            switch RedisWireFormat.envelope(channel: channel, payload: payload, names: &names) {
            case .success(let envelope): return "envelope " + envelope.canonicalText
            case .failure(.notAnEnvelope):
                // Not the reason's text: for JSON with several faults, which one JSONDecoder
                // reports first follows its dictionaries' order, which differs between instances.
                return "malformed: not an envelope"
            case .failure(let reason): return "malformed \(reason)"
            }
        case .unreadable(let kind): return "unreadable \(kind)"
        case .confirmation(let key, let subscribed): return "confirmation \(String(describing: key)) \(subscribed)"
        case .refused(let text): return "refused \(text)"
        case .other: return "other"
        }
    }

    package static func seeds() -> [FuzzSeed] {
        let envelopes = SeedEnvelopes.all(name: "fuzz")
        var seeds: [FuzzSeed] = []
        for (index, envelope) in envelopes.enumerated() {
            if let binary = try? binaryPayload(of: envelope) {
                seeds.append(FuzzSeed("payload-binary-\(index)", [0] + binary))
                seeds.append(FuzzSeed("resp-message-binary-\(index)", [1] + resp(["message", channel], payload: binary)))
            }
            if let json = try? RedisWireFormat.payload(for: envelope, sender: "fuzz") {
                seeds.append(FuzzSeed("payload-json-\(index)", [0] + Array(json)))
                seeds.append(FuzzSeed("resp-pmessage-json-\(index)",
                                      [1] + resp(["pmessage", RedisChannelNaming.prefix + "*", channel], payload: Array(json))))
            }
        }
        seeds.append(FuzzSeed("payload-json-by-hand", [0] + Array(#"{"v":1,"name":"fuzz","userInfo":{"n":{"uint":18446744073709551615},"d":{"double":"nan"},"b":{"data":"AAE="},"a":{"array":[{"bool":true}]},"m":{"dict":{"k":{"string":"v"}}}}}"#.utf8)))
        seeds.append(FuzzSeed("resp-confirmations", [1] + Array("*3\r\n$9\r\nsubscribe\r\n$3\r\nabc\r\n:1\r\n*3\r\n$10\r\npsubscribe\r\n$1\r\n*\r\n:2\r\n-ERR nope\r\n+OK\r\n".utf8)))
        seeds.append(FuzzSeed("resp-unreadable", [1] + Array("*3\r\n$7\r\nmessage\r\n:5\r\n$-1\r\n*4\r\n$8\r\npmessage\r\n$1\r\n*\r\n*0\r\n$0\r\n\r\n".utf8)))
        seeds.append(FuzzSeed("edge-huge-count", [1] + Array("*2147483647\r\n".utf8)))
        seeds.append(FuzzSeed("edge-binary-truncated", [0, 0xB1, 0x00, 0xFF, 0xFF]))
        return seeds
    }

    /// A RESP array of bulk strings: `parts`, then `payload`.
    package static func resp(_ parts: [String], payload: [UInt8]) -> [UInt8] {
        var out = Array("*\(parts.count + 1)\r\n".utf8)
        for part in parts.map({ Array($0.utf8) }) + [payload] {
            out += Array("$\(part.count)\r\n".utf8) + part + Array("\r\n".utf8)
        }
        return out
    }
}
