import Foundation
import PortRunLoopKit
import PortRunLoopRedis
import Testing
import PortRunLoopTestSupport

/// Notifications posted and observed as ``BusFields`` through a private redis-server: the same
/// notification for observers of either form, in both payload formats, on the chosen thread.
@Suite(.timeLimit(.minutes(1))) struct RedisFieldsTests {
    static let allTypes: BusFields = [
        "text": "héllo \"quoted\"", "count": 42, "ratio": 0.25, "flag": true, "data": .data(Data([0, 1, 255])),
        "nested": ["inner": "deep"], "list": [1, "two", 3.5], "big": .unsignedInt(UInt64.max),
    ]

    @Test(arguments: [RedisPayloadFormat.binary, .json])
    func fieldsArriveAsPostedAndAsAPropertyListForOtherObservers(format: RedisPayloadFormat) throws {
        let server = try RedisServer()
        var endpoint = server.endpoint
        endpoint.payloadFormat = format
        let fixture = try RedisFixture(server: server, endpoint: endpoint)
        defer { fixture.shutDown() }
        let delivery = try RunLoopThread(name: "redis-fields")
        defer { delivery.stop() }
        let typed = Collector<BusNotification>()
        let onThread = Collector<Bool>()
        let plain = Collector<String>()
        let a = try fixture.center.addFieldsObserver(forName: .init("fields.trip"), on: delivery.loop) { note in
            onThread.append(delivery.loop.isCurrentThread)
            typed.append(note)
        }
        let b = try fixture.center.addObserver(forName: .init("fields.trip"), on: fixture.thread.loop) { note in
            let info = note.userInfo ?? [:]
            plain.append("\(info["text"] as? String ?? "?") \(info["count"] as? Int ?? -1) \(info["big"] as? UInt64 ?? 0) "
                + "\((info["nested"] as? [String: Any])?["inner"] as? String ?? "?") \((info["list"] as? [Any])?.count ?? -1)")
        }
        try fixture.center.post(name: .init("fields.trip"), object: "doc-1", fields: Self.allTypes)
        try fixture.center.post(name: .init("fields.trip"), userInfo: ["count": 7, "list": [1]])
        #expect(typed.wait(for: 2))
        #expect(plain.wait(for: 2))
        #expect(typed.values.first == BusNotification(name: .init("fields.trip"), object: "doc-1", fields: Self.allTypes))
        #expect(typed.values.last?.fields == ["count": 7, "list": [1]])
        #expect(onThread.values == [true, true])
        #expect(plain.values == ["héllo \"quoted\" 42 \(UInt64.max) deep 3", "? 7 0 ? 1"])
        a.remove(); b.remove()
    }

    /// A key twice in a binary payload is malformed wherever it is (the userInfo or a dictionary
    /// inside, few entries or many) and whichever form it is read for: dropped and counted.
    @Test func aRepeatedKeyInABinaryPayloadIsACountedDrop() throws {
        let fixture = try RedisFixture()
        defer { fixture.shutDown() }
        let typed = Collector<Int>()
        let observation = try fixture.center.addFieldsObserver(forName: nil, on: fixture.thread.loop) {
            typed.append($0.fields["n"]?.intValue ?? -1)
        }
        typealias Bytes = RedisBinaryPayloadTests.Bytes
        var nested = Bytes.header(count: 1)
        nested.str("d"); nested.u8(0x09); nested.u32(2)
        for _ in 0..<2 { nested.str("k"); nested.u8(0x06) }
        var many = Bytes.header(count: 12)
        for index in 0..<11 { many.str("k\(index)"); many.u8(0x06) }
        many.str("k3"); many.u8(0x05)
        // Two ASCII keys of one length that differ only in their last byte, then the same key
        // spelled twice in canonically equal forms ("é" precomposed, and "e" with a combining
        // accent: different bytes and byte counts, one key as a Swift string compares them).
        var sameLength = Bytes.header(count: 3)
        for key in ["key-a", "key-b", "key-a"] { sameLength.str(key); sameLength.u8(0x06) }
        var equivalent = Bytes.header(count: 2)
        for key in ["caf\u{E9}", "cafe\u{301}"] { equivalent.str(key); equivalent.u8(0x06) }
        let raw = try RawRedisClient(port: fixture.server.port)
        for payload in [nested, many, sameLength, equivalent] {
            #expect(try raw.publish("portrunloop.notification.bad", payload.bytes) == 1)
        }
        try fixture.center.post(name: .init("good"), fields: ["n": 3])
        #expect(typed.wait(for: 1))
        #expect(typed.values == [3])
        #expect(fixture.center.metrics.malformedDropped == 4)
        observation.remove()
    }

    /// Keys and string values of every length from 0 to 40 bytes (each side of the inline-string
    /// limit, 15 bytes, and of the reader's 8-byte ASCII scan), ASCII or with one non-ASCII
    /// character at any position, arrive as posted; the same bytes made invalid UTF-8 at any
    /// position are a counted drop.
    @Test func stringsOfEveryLengthArriveIntactAndInvalidOnesAreDropped() throws {
        let fixture = try RedisFixture()
        defer { fixture.shutDown() }
        let typed = Collector<BusFields>()
        let observation = try fixture.center.addFieldsObserver(forName: .init("lengths"), on: fixture.thread.loop) {
            typed.append($0.fields)
        }
        var expected: [BusFields] = []
        for length in 0...40 {
            let ascii = String(repeating: "k", count: length)
            var fields: BusFields = ["\(ascii)-key": .string(ascii)]
            for position in stride(from: 0, to: length, by: 3) {
                var characters = Array(ascii)
                characters[position] = "\u{E9}"
                fields["\(String(characters))-\(position)"] = .string(String(characters))
            }
            try fixture.center.post(name: .init("lengths"), fields: fields)
            expected.append(fields)
        }
        typealias Bytes = RedisBinaryPayloadTests.Bytes
        let raw = try RawRedisClient(port: fixture.server.port)
        var invalid = 0
        for length in [1, 7, 8, 9, 15, 16, 17, 31] {
            for position in [0, length / 2, length - 1] {
                var bytes = [UInt8](repeating: UInt8(ascii: "k"), count: length)
                bytes[position] = 0xFF // never valid in UTF-8
                var payload = Bytes.header(count: 1)
                payload.u32(length); payload.bytes += bytes; payload.u8(0x06)
                #expect(try raw.publish("portrunloop.notification.lengths", payload.bytes) == 1)
                invalid += 1
            }
        }
        try fixture.center.post(name: .init("lengths"), fields: ["last": true])
        expected.append(["last": true])
        #expect(typed.wait(for: expected.count))
        #expect(typed.values == expected)
        #expect(fixture.center.metrics.malformedDropped == invalid)
        observation.remove()
    }
}
