import Foundation
import PortRunLoopFuzzSupport
import PortRunLoopKit
import PortRunLoopRedis

/// `fuzz-endpoint`: the short texts other processes hand the library that name where to meet.
/// The same input is read as each of them:
///
/// - the publisher's parameters in a port name's lock file (``PublisherParameters``), which a
///   client reads: a line accepted is exactly the line the publisher writes for those values;
/// - a port name (``PortNameDirectory/validate(_:)``): accepted only when it is 1 or more of
///   `[A-Za-z0-9._-]`, not starting with a dot, and its socket path fits `sun_path`;
/// - a Redis channel (``RedisChannelNaming/name(ofChannel:)``): a name read is the one whose
///   channel those bytes are;
/// - a Redis subscription's rule (`SubscriptionKey(rule:)`): a key read gives back that rule.
package enum EndpointHarness: FuzzHarness {
    package static let targetName = "fuzz-endpoint"
    static let directory = PortNameDirectory(path: "/tmp/portrunloop-fuzz")

    package static func run(_ bytes: UnsafeRawBufferPointer) throws(InvariantViolation) {
        let array = [UInt8](bytes)
        if let parameters = PublisherParameters(array) {
            try require(parameters.encoded == array, "parameters \(parameters) read from \(String(decoding: array, as: UTF8.self).debugDescription), which is not their line")
            try require(PublisherParameters(parameters.encoded) == parameters, "parameters \(parameters) do not read back")
        }
        let text = String(decoding: array, as: UTF8.self)
        let validated: CrossProcessPortError?
        do throws(CrossProcessPortError) { try directory.validate(text); validated = nil } catch { validated = error }
        switch validated {
        case nil:
            let allowed = text.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0)) }
            try require(allowed && text.first != ".", "the port name \(text.debugDescription) was accepted")
            try require(directory.socketPath(for: text).utf8.count <= 107, "the port name \(text.debugDescription) overflows sun_path")
        case .invalidName?:
            break
        case let error?:
            throw InvariantViolation("validate threw \(error)")
        }
        if let name = RedisChannelNaming.name(ofChannel: bytes) {
            try require(Array(RedisChannelNaming.channel(for: name).utf8) == array, "channel bytes \(array) read as name \(name.debugDescription)")
        }
        var cache = RedisChannelNaming.NameCache()
        try require(cache.name(ofChannel: bytes) == RedisChannelNaming.name(ofChannel: bytes), "the channel name cache disagrees")
        try require(cache.name(ofChannel: bytes) == RedisChannelNaming.name(ofChannel: bytes), "the channel name cache disagrees when warm")
        if let key = SubscriptionKey(rule: text) {
            try require(key.rule == text, "the subscription rule \(text.debugDescription) reads as \(key)")
        }
    }

    package static func seeds() -> [FuzzSeed] {
        [
            FuzzSeed("parameters", PublisherParameters(credits: 64, maximumFrameSize: 1 << 20).encoded),
            FuzzSeed("parameters-extremes", PublisherParameters(credits: Int(UInt32.max), maximumFrameSize: 36).encoded),
            FuzzSeed("parameters-zero-credits", Array("PRLX 3 0 1048576\n".utf8)),
            FuzzSeed("port-name", Array("com.example.service-1_a".utf8)),
            FuzzSeed("port-name-dot", Array(".hidden".utf8)),
            FuzzSeed("port-name-long", Array(String(repeating: "n", count: 120).utf8)),
            FuzzSeed("channel", Array(RedisChannelNaming.channel(for: "com.example.changed").utf8)),
            FuzzSeed("channel-not-utf8", Array(RedisChannelNaming.prefix.utf8) + [0xC3, 0x28]),
            FuzzSeed("rule-subscribe", Array(SubscriptionKey.channel("portrunloop.notification.x").rule.utf8)),
            FuzzSeed("rule-psubscribe", Array(SubscriptionKey.pattern("portrunloop.notification.*").rule.utf8)),
        ]
    }
}
