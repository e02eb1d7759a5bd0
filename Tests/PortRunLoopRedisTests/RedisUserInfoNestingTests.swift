import Foundation
import PortRunLoopKit
import PortRunLoopRedis
import Testing
import PortRunLoopTestSupport

/// Both payload forms carry a userInfo nested up to 64 containers and refuse a deeper one with a
/// typed error at the post (found by `fuzz-redis-payload`: the binary writer wrote what every
/// reader then dropped as malformed, and a JSON envelope read with a deeper userInfo could not
/// be posted on in binary); a JSON envelope nested deeper that another program publishes is
/// malformed, as a binary one is.
@Suite(.timeLimit(.minutes(1)))
struct RedisUserInfoNestingTests {
    static func nested(_ depth: Int) -> Any {
        var value: Any = 1
        for _ in 0..<depth { value = [value] }
        return value
    }

    @Test(arguments: [RedisPayloadFormat.binary, .json])
    func sixtyFourLevelsArriveAndSixtyFiveAreATypedError(format: RedisPayloadFormat) throws {
        let server = try RedisServer()
        var endpoint = server.endpoint
        endpoint.payloadFormat = format
        let fixture = try RedisFixture(server: server, endpoint: endpoint)
        defer { fixture.shutDown() }
        let arrived = Collector<Int>()
        let observation = try fixture.center.addObserver(forName: .init("deep"), on: fixture.thread.loop) { _ in arrived.append(1) }
        defer { observation.remove() }
        try fixture.center.post(name: .init("deep"), userInfo: ["a": Self.nested(64)])
        #expect {
            try fixture.center.post(name: .init("deep"), userInfo: ["a": Self.nested(65)])
        } throws: { error in
            guard case BusNotificationError.unsupportedUserInfoValue(_, let type) = error else { return false }
            return type.contains("nested deeper")
        }
        try fixture.center.post(name: .init("deep"), userInfo: ["a": 2])
        #expect(arrived.wait(for: 2))
        #expect(fixture.center.metrics.malformedDropped == 0)
    }

    @Test func aJSONEnvelopeNestedDeeperIsMalformed() {
        // The fuzzer's kind of input: 70 nested arrays in a JSON envelope.
        var value = #"{"bool":true}"#
        for _ in 0..<70 { value = #"{"array":["# + value + "]}" }
        let payload = Array(#"{"v":1,"name":"deep","userInfo":{"a":"#.utf8) + Array(value.utf8) + Array("}}".utf8)
        var names = RedisChannelNaming.NameCache()
        let read = Array(RedisChannelNaming.channel(for: "deep").utf8).withUnsafeBytes { channel in
            payload.withUnsafeBytes { RedisWireFormat.envelope(channel: channel, payload: $0, names: &names) }
        }
        guard case .failure(.notAnEnvelope(let why)) = read else {
            Issue.record("a JSON envelope nested 71 deep was read: \(read)")
            return
        }
        #expect(why.contains("nested deeper"))
    }
}
