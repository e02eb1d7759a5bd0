import Foundation
import PortRunLoopKit
import PortRunLoopRedis
import Testing
import PortRunLoopTestSupport

/// The binary payload (PortRunLoopRedis.docc/RedisNotifications.md, "Payload"), against a real
/// redis-server: what a center posts is the documented layout byte for byte, every property-list
/// type makes the round trip, the JSON form is still read, and malformed, truncated or oversized
/// payloads from another program are counted drops that leave the connection up.
@Suite(.timeLimit(.minutes(2))) struct RedisBinaryPayloadTests {
    /// Builds payloads by the documented layout (independently of the library's writer).
    struct Bytes {
        var bytes: [UInt8] = []
        mutating func u8(_ value: UInt8) { bytes.append(value) }
        mutating func u32(_ value: Int) { withUnsafeBytes(of: UInt32(value).littleEndian) { bytes += $0 } }
        mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        mutating func str(_ text: String) { u32(text.utf8.count); bytes += Array(text.utf8) }
        /// Format byte, flags, sender, object (if any), entry count.
        static func header(flags: UInt8 = 0, sender: String = "test", object: String? = nil, count: Int) -> Bytes {
            var b = Bytes()
            b.u8(0xB1)
            b.u8(flags | (object == nil ? 0 : 0x02))
            b.str(sender)
            if let object { b.str(object) }
            b.u32(count)
            return b
        }
    }

    @Test func aPostIsTheDocumentedBinaryLayout() throws {
        let fixture = try RedisFixture()
        defer { fixture.shutDown() }
        let raw = try RawRedisClient(port: fixture.server.port)
        try raw.subscribe("portrunloop.notification.layout")
        try fixture.center.post(name: .init("layout"), object: "obj", userInfo: ["k": 5], deliverImmediately: true)
        let payload = try raw.nextMessage()
        var expected = Bytes.header(flags: 0x01, sender: fixture.center.uniqueName ?? "?", object: "obj", count: 1)
        expected.str("k")
        expected.u8(0x02)
        expected.u64(5)
        #expect(payload == expected.bytes)

        try fixture.center.post(name: .init("layout"))
        #expect(try raw.nextMessage() == Bytes.header(sender: fixture.center.uniqueName ?? "?", count: 0).bytes)
    }

    @Test func everyPropertyListTypeMakesTheRoundTrip() throws {
        let fixture = try RedisFixture()
        defer { fixture.shutDown() }
        let seen = Collector<String>()
        let observation = try fixture.center.addObserver(forName: .init("types"), on: fixture.thread.loop) { note in
            seen.append(Self.describe(note.userInfo))
        }
        let userInfo: [AnyHashable: Any] = [
            "string": "héllo ✓", "empty": "", "int": -42, "int8": Int8(-8), "int16": Int16(1600), "int32": Int32(-32),
            "int64": Int64.min, "uint": UInt(7), "uint8": UInt8(255), "uint16": UInt16(65535), "uint32": UInt32.max,
            "uint64": UInt64.max, "double": 1.5, "nan": Double.nan, "inf": -Double.infinity, "float": Float(0.25),
            "true": true, "false": false, "data": Data([0, 1, 255]), "emptyData": Data(),
            "array": [1, "two", [3.0], ["four": 4]] as [Any], "emptyArray": [Any](),
            "dict": ["a": ["b": Data([9])]] as [String: Any], "emptyDict": [String: Any](),
            "number": NSNumber(value: 2.5), "bigNumber": NSNumber(value: UInt64.max),
        ]
        try fixture.center.post(name: .init("types"), userInfo: userInfo)
        try fixture.center.post(name: .init("types"), userInfo: [:])
        try fixture.center.post(name: .init("types"))
        #expect(seen.wait(for: 3))
        let expected: [AnyHashable: Any] = [
            "string": "héllo ✓", "empty": "", "int": -42, "int8": -8, "int16": 1600, "int32": -32,
            "int64": Int(Int64.min), "uint": 7, "uint8": 255, "uint16": 65535, "uint32": Int(UInt32.max),
            "uint64": UInt64.max, "double": 1.5, "nan": Double.nan, "inf": -Double.infinity, "float": 0.25,
            "true": true, "false": false, "data": Data([0, 1, 255]), "emptyData": Data(),
            "array": [1, "two", [3.0], ["four": 4]] as [Any], "emptyArray": [Any](),
            "dict": ["a": ["b": Data([9])]] as [String: Any], "emptyDict": [String: Any](),
            "number": 2.5, "bigNumber": UInt64.max,
        ]
        // An empty userInfo arrives as none (no dictionary is made for it).
        #expect(seen.values == [Self.describe(expected), "nil", "nil"])
        observation.remove()
    }

    @Test func aPostOverTheSizeLimitIsATypedErrorAndNothingIsSent() throws {
        let fixture = try RedisFixture()
        defer { fixture.shutDown() }
        #expect {
            try fixture.center.post(name: .init("huge"), userInfo: ["blob": Data(count: 16 << 20)])
        } throws: { error in
            guard case BusNotificationError.unsupportedUserInfoValue = error else { return false }
            return true
        }
        try fixture.center.flushRedisPosts()
        #expect(fixture.center.redisMetrics?.published == 0)
    }

    /// The limit (16 MiB, PortRunLoopRedis.docc/RedisNotifications.md) is on the payload: one of
    /// exactly that size is posted, one byte more is the typed error.
    @Test func aPayloadOfExactlyTheLimitIsPostedAndOneByteMoreIsNot() throws {
        let fixture = try RedisFixture()
        defer { fixture.shutDown() }
        let sender = fixture.center.uniqueName ?? ""
        // Format, flags, sender, count, then the entry "blob": key, tag, length, bytes.
        let overhead = 1 + 1 + (4 + sender.utf8.count) + 4 + (4 + 4) + 1 + 4
        let fitting = (16 << 20) - overhead
        try fixture.center.post(name: .init("limit"), userInfo: ["blob": Data(count: fitting)])
        #expect {
            try fixture.center.post(name: .init("limit"), userInfo: ["blob": Data(count: fitting + 1)])
        } throws: { error in
            guard case BusNotificationError.unsupportedUserInfoValue = error else { return false }
            return true
        }
        try fixture.center.flushRedisPosts(timeout: .seconds(30))
        #expect(fixture.center.redisMetrics?.published == 1)
    }

    /// The command is written into a buffer sized by an estimate (a few dozen bytes per entry); a
    /// larger one is written again at the size the first pass counted. Both arrive byte for byte.
    @Test func aPayloadLargerThanItsEstimateArrivesWhole() throws {
        let fixture = try RedisFixture()
        defer { fixture.shutDown() }
        let raw = try RawRedisClient(port: fixture.server.port)
        try raw.subscribe("portrunloop.notification.large")
        var generator = SystemRandomNumberGenerator()
        let blob = Data((0..<100_000).map { _ in UInt8.random(in: 0 ... 255, using: &generator) })
        let text = String(repeating: "é", count: 5_000)
        try fixture.center.post(name: .init("large"), userInfo: ["blob": blob])
        try fixture.center.post(name: .init("large"), object: text)
        var first = Bytes.header(sender: fixture.center.uniqueName ?? "?", count: 1)
        first.str("blob")
        first.u8(0x07)
        first.u32(blob.count)
        first.bytes += Array(blob)
        #expect(try raw.nextMessage() == first.bytes)
        #expect(try raw.nextMessage() == Bytes.header(sender: fixture.center.uniqueName ?? "?", object: text, count: 0).bytes)
    }

    @Test func theJSONFormIsStillReadAndCanBePosted() throws {
        let server = try RedisServer()
        var endpoint = server.endpoint
        endpoint.payloadFormat = .json
        let fixture = try RedisFixture(server: server, endpoint: endpoint)
        defer { fixture.shutDown() }
        let binary = try RedisFixture(server: server, name: "binary-center")
        defer { binary.center.close(); binary.thread.stop() }
        let seen = Collector<String>()
        let observation = try binary.center.addObserver(forName: .init("mixed"), on: binary.thread.loop) { note in
            seen.append("\(note.object as? String ?? "nil") \(Self.describe(note.userInfo))")
        }
        let raw = try RawRedisClient(port: server.port)
        try raw.subscribe("portrunloop.notification.mixed")
        try fixture.center.post(name: .init("mixed"), object: "json", userInfo: ["n": 1])
        let payload = try raw.nextMessage()
        #expect(payload.first == UInt8(ascii: "{"))
        try binary.center.post(name: .init("mixed"), object: "binary", userInfo: ["n": 2])
        #expect(try raw.nextMessage().first == 0xB1)
        #expect(seen.wait(for: 2))
        #expect(seen.values == ["json [n: Int 1]", "binary [n: Int 2]"])
        observation.remove()
    }

    @Test func malformedTruncatedAndOversizedPayloadsAreCountedDrops() throws {
        let fixture = try RedisFixture()
        defer { fixture.shutDown() }
        let names = Collector<String>()
        let observation = try fixture.center.addObserver(forName: nil, on: fixture.thread.loop) { note in
            names.append(note.name.rawValue)
        }
        var cases: [[UInt8]] = []
        cases.append([0xB1])                                                      // no flags
        cases.append([0xB1, 0x80] + Bytes.header(count: 0).bytes.dropFirst(2))    // unknown flag
        var hugeSender = Bytes(); hugeSender.u8(0xB1); hugeSender.u8(0); hugeSender.u32(0xFFFF_FFFF)
        cases.append(hugeSender.bytes)                                            // sender longer than the payload
        var hugeCount = Bytes.header(count: 1_000_000_000)
        hugeCount.str("k")
        cases.append(hugeCount.bytes)                                             // count beyond the bytes left
        var unknownTag = Bytes.header(count: 1); unknownTag.str("k"); unknownTag.u8(0x7F)
        cases.append(unknownTag.bytes)
        var badUTF8 = Bytes.header(count: 1); badUTF8.str("k"); badUTF8.u8(0x01); badUTF8.u32(2); badUTF8.bytes += [0xC3, 0x28]
        cases.append(badUTF8.bytes)
        var twice = Bytes.header(count: 2)
        for _ in 0..<2 { twice.str("k"); twice.u8(0x06) }
        cases.append(twice.bytes)                                                 // a key twice
        var trailing = Bytes.header(count: 0); trailing.u8(0)
        cases.append(trailing.bytes)                                              // bytes after the end
        var shortWord = Bytes.header(count: 1); shortWord.str("k"); shortWord.u8(0x02); shortWord.bytes += [1, 2, 3]
        cases.append(shortWord.bytes)                                             // truncated integer
        var deep = Bytes.header(count: 1); deep.str("k")
        for _ in 0..<65 { deep.u8(0x08); deep.u32(1) }
        deep.u8(0x06)
        cases.append(deep.bytes)                                                  // nested 65 deep
        var oversized = Bytes.header(count: 1); oversized.str("k"); oversized.u8(0x07)
        oversized.u32(16 << 20); oversized.bytes += [UInt8](repeating: 7, count: 16 << 20)
        cases.append(oversized.bytes)                                             // over 16 MiB
        let raw = try RawRedisClient(port: fixture.server.port)
        for payload in cases {
            #expect(try raw.publish("portrunloop.notification.bad", payload) == 1)
        }
        // A name that is not UTF-8.
        #expect(try raw.publish(channel: Array("portrunloop.notification.".utf8) + [0xC3, 0x28], Bytes.header(count: 0).bytes) == 1)
        var nested = Bytes.header(count: 1); nested.str("k")
        for _ in 0..<64 { nested.u8(0x08); nested.u32(1) }
        nested.u8(0x06)
        #expect(try raw.publish("portrunloop.notification.deepest", nested.bytes) == 1) // 64 deep is allowed
        // A good one last: once it arrives, everything before it has been read.
        #expect(try raw.publish("portrunloop.notification.good", Bytes.header(count: 0).bytes) == 1)
        #expect(names.wait(for: 2))
        #expect(names.values == ["deepest", "good"])
        #expect(fixture.center.metrics.malformedDropped == cases.count + 1)
        #expect(fixture.center.redisMetrics?.malformed == cases.count + 1)
        #expect(fixture.center.isConnected)
        observation.remove()
    }

    @Test func seededMutationsOfAPayloadAreDeliveredOrCountedNeverACrash() throws {
        let fixture = try RedisFixture()
        defer { fixture.shutDown() }
        let delivered = Collector<Int>()
        let observation = try fixture.center.addObserver(forName: .init("fuzz"), on: fixture.thread.loop) { _ in
            delivered.append(1)
        }
        var valid = Bytes.header(sender: "fuzz", object: "o", count: 3)
        valid.str("s"); valid.u8(0x01); valid.str("text")
        valid.str("a"); valid.u8(0x08); valid.u32(2); valid.u8(0x02); valid.u64(9); valid.u8(0x04); valid.u64(1.5.bitPattern)
        valid.str("d"); valid.u8(0x09); valid.u32(1); valid.str("x"); valid.u8(0x07); valid.u32(2); valid.bytes += [1, 2]
        var generator = SeededGenerator(seed: 0x5EED)
        let raw = try RawRedisClient(port: fixture.server.port)
        let count = 2_000
        var commands = 0
        for index in 0..<count {
            var payload = valid.bytes
            switch index % 3 {
            case 0: payload = Array(payload.prefix(Int.random(in: 0..<payload.count, using: &generator)))
            case 1: payload[Int.random(in: 0..<payload.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
            default:
                let at = Int.random(in: 1..<payload.count, using: &generator)
                payload.replaceSubrange(at..<min(at + 4, payload.count), with: [0xFF, 0xFF, 0xFF, 0x7F])
            }
            try raw.send([Array("PUBLISH".utf8), Array("portrunloop.notification.fuzz".utf8), payload])
            commands += 1
        }
        for _ in 0..<commands { _ = try raw.reply() }
        // The same connection carries a marker last: once it is handled, everything before it was.
        let ended = Collector<Int>()
        let end = try fixture.center.addObserver(forName: .init("fuzz.end"), on: fixture.thread.loop) { _ in ended.append(1) }
        try raw.publish("portrunloop.notification.fuzz", valid.bytes)
        try raw.publish("portrunloop.notification.fuzz.end", Bytes.header(count: 0).bytes)
        #expect(ended.wait(for: 1))
        let malformed = fixture.center.metrics.malformedDropped
        #expect(delivered.values.count + malformed == count + 1)
        #expect(malformed > count / 2)
        #expect(delivered.values.count >= 1)
        #expect(fixture.center.isConnected)
        end.remove()
        observation.remove()
    }

    /// A userInfo as sorted `key: Type value` text (NaN compares equal to itself here).
    static func describe(_ userInfo: [AnyHashable: Any]?) -> String {
        guard let userInfo else { return "nil" }
        return "[" + userInfo.map { "\($0.key): \(describe(value: $0.value))" }.sorted().joined(separator: ", ") + "]"
    }

    static func describe(value: Any) -> String {
        switch value {
        case let v as [Any]: "[" + v.map { describe(value: $0) }.joined(separator: ", ") + "]"
        case let v as [String: Any]: "{" + v.map { "\($0.key): \(describe(value: $0.value))" }.sorted().joined(separator: ", ") + "}"
        case let v as Data: "Data \(Array(v))"
        default: "\(type(of: value)) \(value)"
        }
    }
}

/// A deterministic generator (SplitMix64) for the seeded cases.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
