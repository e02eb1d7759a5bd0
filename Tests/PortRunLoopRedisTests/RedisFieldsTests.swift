import Foundation
import PortRunLoopDBus
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
        let raw = try RawRedisClient(port: fixture.server.port)
        #expect(try raw.publish("portrunloop.notification.bad", nested.bytes) == 1)
        #expect(try raw.publish("portrunloop.notification.bad", many.bytes) == 1)
        try fixture.center.post(name: .init("good"), fields: ["n": 3])
        #expect(typed.wait(for: 1))
        #expect(typed.values == [3])
        #expect(fixture.center.metrics.malformedDropped == 2)
        observation.remove()
    }
}
