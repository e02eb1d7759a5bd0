import Foundation
import PortRunLoopFuzzSupport
import PortRunLoopKit
import PortRunLoopRedis
import Testing

/// The texts that name where to meet, read as they may arrive cut short (a lock file read while
/// its publisher writes it, a channel's bytes cut inside a character): a publisher's parameters
/// cut anywhere are refused, never misread; a channel cut anywhere reads as a name or as none.
@Suite(.timeLimit(.minutes(1)))
struct EndpointSplitTests {
    @Test func parametersCutAnywhereAreRefused() {
        var random = SplitMix64(seed: 0x5041_5241_4D)
        for _ in 0..<200 {
            let line = PublisherParameters(credits: .random(in: 1...Int(UInt32.max), using: &random),
                                           maximumFrameSize: .random(in: 36...(1 << 30), using: &random)).encoded
            #expect(PublisherParameters(line)?.encoded == line)
            for length in 0..<line.count {
                #expect(PublisherParameters(Array(line.prefix(length))) == nil, "\(String(decoding: line.prefix(length), as: UTF8.self))")
            }
        }
    }

    @Test func aChannelCutAnywhereReadsAsItsPrefixName() {
        var random = SplitMix64(seed: 0x4348_414E)
        for _ in 0..<200 {
            let name = String((0..<Int.random(in: 0...12, using: &random)).map { _ in "aé✓😀.-"[...].randomElement(using: &random)! })
            let channel = Array(RedisChannelNaming.channel(for: name).utf8)
            for length in 0...channel.count {
                let prefix = Array(channel.prefix(length))
                let read = prefix.withUnsafeBytes { RedisChannelNaming.name(ofChannel: $0) }
                if let read {
                    #expect(Array(RedisChannelNaming.channel(for: read).utf8) == prefix)
                } else {
                    #expect(length < RedisChannelNaming.prefix.utf8.count || String(validating: prefix, as: UTF8.self) == nil)
                }
            }
        }
    }
}
