import CHiredis
import Foundation
import PortRunLoopRedis
import Testing

/// hiredis' reader as every connection sets it up (``RedisReplyLimit``): a reply that declares a
/// huge array fails the reader at once instead of allocating its element table (found by
/// `fuzz-redis-payload`: `*2147483647\r\n` made hiredis 0.14 ask for 16 GB), while the replies a
/// center reads (pushes, confirmations) and arrays up to the bound read as before.
@Suite(.timeLimit(.minutes(1)))
struct RedisReplyLimitTests {
    /// Feeds `bytes` to a limited reader; the number of replies read, or nil when the reader failed.
    private func replies(_ bytes: [UInt8]) -> Int? {
        guard let reader = redisReaderCreate() else { return nil }
        defer { redisReaderFree(reader) }
        RedisReplyLimit.install(on: reader)
        let fed = bytes.withUnsafeBytes { redisReaderFeed(reader, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count) }
        guard fed == REDIS_OK else { return nil }
        var count = 0
        while true {
            var reply: UnsafeMutableRawPointer?
            guard redisReaderGetReply(reader, &reply) == REDIS_OK else { return nil }
            guard let reply else { return count }
            freeReplyObject(reply)
            count += 1
        }
    }

    @Test func aHugeDeclaredArrayFailsTheReader() {
        // The fuzzer's input (Tests/Fuzz/Corpus/fuzz-redis-payload/edge-huge-count, after its mode byte).
        #expect(replies(Array("*2147483647\r\n".utf8)) == nil)
        #expect(replies(Array("*\(RedisReplyLimit.maximumElements + 1)\r\n".utf8)) == nil)
        #expect(replies(Array("*3\r\n$7\r\nmessage\r\n*99999999\r\n".utf8)) == nil)
    }

    @Test func repliesWithinTheBoundRead() {
        let push = "*3\r\n$7\r\nmessage\r\n$3\r\nabc\r\n$2\r\nhi\r\n"
        #expect(replies(Array((push + "*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n+PONG\r\n").utf8)) == 3)
        let limit = Int(RedisReplyLimit.maximumElements)
        #expect(replies(Array(("*\(limit)\r\n" + String(repeating: ":1\r\n", count: limit)).utf8)) == 1)
    }
}
