import Foundation
import PortRunLoopBus
import PortRunLoopFuzzHarness
import PortRunLoopFuzzSupport
import PortRunLoopRedis
import Testing

/// A subscribed connection's bytes (RESP: `message` and `pmessage` pushes carrying binary and
/// JSON payloads, confirmations, an error) fed to hiredis' reader whole, one byte at a time and
/// at seeded random points: the same notifications come out, in order, whatever the cuts; and a
/// payload cut short is refused (malformed), never misread.
@Suite(.timeLimit(.minutes(1)))
struct RedisReplySplitTests {
    @Test func pushesFedInAnyPiecesGiveTheSameNotifications() throws {
        var random = SplitMix64(seed: 0x5245_4449_53)
        for _ in 0..<40 {
            var stream: [UInt8] = []
            var expected: [String] = []
            for index in 0..<Int.random(in: 1...6, using: &random) {
                let envelope = SeedEnvelopes.random(name: "fuzz", using: &random)
                let payload = index % 2 == 0 ? try RedisPayloadHarness.binaryPayload(of: envelope)
                    : [UInt8](try RedisWireFormat.payload(for: envelope, sender: "split"))
                stream += RedisPayloadHarness.resp(["message", RedisPayloadHarness.channel], payload: payload)
                expected.append("envelope " + envelope.canonicalText)
            }
            stream += Array("*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n-ERR no\r\n".utf8)
            expected += ["confirmation Optional(PortRunLoopRedis.SubscriptionKey.channel(\"c\")) true", "refused ERR no"]
            stream.withUnsafeBytes { whole in
                #expect(RedisPayloadHarness.read([whole]) == expected)
                let plans = [ByteSplits.oneByteAtATime(whole.count)] + (0..<4).map { _ in ByteSplits.randomCuts(whole.count, using: &random) }
                for cuts in plans {
                    #expect(RedisPayloadHarness.read(ByteSplits.pieces(of: whole, cuts: cuts)) == expected)
                }
            }
        }
    }

    @Test func aPayloadCutShortIsRefused() throws {
        var random = SplitMix64(seed: 0x5452_554E_43)
        var names = RedisChannelNaming.NameCache()
        for _ in 0..<60 {
            let binary = try RedisPayloadHarness.binaryPayload(of: SeedEnvelopes.random(name: "fuzz", using: &random))
            for length in 0..<binary.count {
                let read = Array(RedisPayloadHarness.channel.utf8).withUnsafeBytes { channel in
                    binary.prefix(length).withUnsafeBytes { RedisWireFormat.envelope(channel: channel, payload: $0, names: &names) }
                }
                guard case .failure = read else {
                    Issue.record("a payload cut after \(length) of \(binary.count) bytes was read")
                    return
                }
            }
        }
    }
}
