import Foundation
import PortRunLoopKit
import PortRunLoopRedis
import Testing
import PortRunLoopTestSupport

/// The documented channels and JSON payload, checked with the reference client: `redis-cli PUBLISH`
/// posts to our observers, `redis-cli SUBSCRIBE` sees what a center set to post JSON posts, and a
/// payload that is not an envelope is a counted drop.
@Suite(.timeLimit(.minutes(1))) struct RedisWireFormatTests {
    @Test func aMessagePublishedByRedisCliReachesAnObserver() throws {
        let fixture = try RedisFixture()
        defer { fixture.shutDown() }
        let seen = Collector<String>()
        let observation = try fixture.center.addObserver(forName: .init("from.cli"), on: fixture.thread.loop) { note in
            let info = note.userInfo ?? [:]
            seen.append("\(note.object as? String ?? "nil") \(info["n"] as? Int ?? -1) \(info["s"] as? String ?? "?") "
                + "\((info["d"] as? Data).map { Array($0) } ?? [])")
        }
        let minimal = try fixture.server.cli(["PUBLISH", "portrunloop.notification.from.cli", #"{"v":1,"name":"from.cli"}"#])
        #expect(minimal.status == 0 && minimal.output.hasPrefix("1"), "\(minimal.output)")
        let full = try fixture.server.cli(["PUBLISH", "portrunloop.notification.from.cli",
                                           #"{"v":1,"name":"from.cli","object":"doc","sender":"cli","userInfo":{"n":{"int":7},"s":{"string":"x"},"d":{"data":"AAH/"}}}"#])
        #expect(full.status == 0, "\(full.output)")
        #expect(seen.wait(for: 2))
        #expect(seen.values == ["nil -1 ? []", "doc 7 x [0, 1, 255]"])
        observation.remove()
    }

    @Test func redisCliSubscribeSeesOurPostInTheDocumentedFormat() throws {
        let server = try RedisServer()
        var endpoint = server.endpoint
        endpoint.payloadFormat = .json
        let fixture = try RedisFixture(server: server, endpoint: endpoint)
        defer { fixture.shutDown() }
        let subscriber = try StreamingProcess(RedisTools.cli, ["-h", "127.0.0.1", "-p", "\(fixture.server.port)",
                                                               "SUBSCRIBE", "portrunloop.notification.to.cli"])
        defer { subscriber.stop() }
        // redis-cli prints the confirmation (subscribe, the channel, the count) once subscribed.
        #expect(subscriber.wait(for: "portrunloop.notification.to.cli\n1\n"))
        try fixture.center.post(name: .init("to.cli"), object: "obj", userInfo: ["k": 5, "flag": true])
        #expect(subscriber.wait(for: "\"v\":1}"))
        let lines = subscriber.output.split(separator: "\n").map(String.init)
        let payload = try #require(lines.last { $0.hasPrefix("{") })
        let sender = fixture.center.uniqueName ?? "?"
        #expect(payload == #"{"name":"to.cli","object":"obj","sender":"\#(sender)","userInfo":{"flag":{"bool":true},"k":{"int":5}},"v":1}"#)
        #expect(lines.contains("message"))
    }

    @Test func aPayloadThatIsNotAnEnvelopeIsACountedDrop() throws {
        let fixture = try RedisFixture()
        defer { fixture.shutDown() }
        let notes = Collector<String>()
        let observation = try fixture.center.addObserver(forName: nil, on: fixture.thread.loop) { note in
            notes.append(note.name.rawValue)
        }
        for payload in ["not json", #"{"v":2,"name":"bad"}"#, #"{"v":1,"name":"other"}"#, #"{"v":1,"name":"bad","userInfo":{"x":5}}"#,
                        #"{"v":1}"#] {
            let result = try fixture.server.cli(["PUBLISH", "portrunloop.notification.bad", payload])
            #expect(result.status == 0, "\(result.output)")
        }
        // A good one last: once it arrives, the five before it have been read.
        try fixture.server.cli(["PUBLISH", "portrunloop.notification.good", #"{"v":1,"name":"good"}"#])
        #expect(notes.wait(for: 1))
        #expect(notes.values == ["good"])
        #expect(fixture.center.metrics.malformedDropped == 5)
        #expect(fixture.center.redisMetrics?.malformed == 5)
        #expect(fixture.center.isConnected)
        observation.remove()
    }

    @Test func badInputIsATypedErrorAndNothingIsSent() throws {
        let fixture = try RedisFixture()
        defer { fixture.shutDown() }
        #expect(throws: BusNotificationError.invalidName("empty")) { try fixture.center.post(name: .init("")) }
        #expect {
            try fixture.center.post(name: .init("bad.info"), userInfo: ["when": Date()])
        } throws: { error in
            guard case BusNotificationError.unsupportedUserInfoValue(let path, _) = error else { return false }
            return path == "when"
        }
        #expect(fixture.center.redisMetrics?.published == 0)
    }

    @Test func deliverImmediatelyTravelsInThePayloadAndPassesASuspendedCenter() throws {
        let fixture = try RedisFixture()
        defer { fixture.shutDown() }
        let seen = Collector<String>()
        let observation = try fixture.center.addObserver(forName: .init("urgent"), suspensionBehavior: .drop, on: fixture.thread.loop) { note in
            seen.append(note.object as? String ?? "nil")
        }
        fixture.center.suspended = true
        try fixture.center.post(name: .init("urgent"), object: "dropped")
        try fixture.server.cli(["PUBLISH", "portrunloop.notification.urgent", #"{"v":1,"name":"urgent","object":"cli","deliverImmediately":true}"#])
        try fixture.center.post(name: .init("urgent"), object: "ours", deliverImmediately: true)
        #expect(seen.wait(for: 2))
        #expect(seen.values == ["cli", "ours"])
        #expect(fixture.center.metrics.droppedWhileSuspended == 1)
        fixture.center.suspended = false
        observation.remove()
    }
}
