import Foundation
import PortRunLoopKit
import PortRunLoopRedis
import Testing
import PortRunLoopTestSupport

/// Notifications between real processes of the package (RedisNotificationProbe) through a private
/// redis-server: a round trip through an echoing process, and two posting processes' streams, each
/// received whole and in its poster's order.
@Suite(.timeLimit(.minutes(2))) struct RedisTwoProcessTests {
    static var probe: String {
        Bundle.main.executableURL!.deletingLastPathComponent().appendingPathComponent("RedisNotificationProbe").path
    }

    @Test func aNotificationMakesARoundTripThroughAnotherProcess() throws {
        let fixture = try RedisFixture()
        defer { fixture.shutDown() }
        let echoes = Collector<String>()
        let observation = try fixture.center.addObserver(forName: .init("probe.pong"), on: fixture.thread.loop) { note in
            echoes.append("\(note.object as? String ?? "nil") \(note.userInfo?["seq"] as? Int ?? -1) \(note.userInfo?["text"] as? String ?? "?")")
        }
        let echo = try StreamingProcess(Self.probe, ["echo", "\(fixture.server.port)", "probe.ping", "probe.pong", "3"])
        defer { echo.stop() }
        #expect(echo.wait(for: "ready\n"), "\(echo.output)")
        for seq in 1...3 { try fixture.center.post(name: .init("probe.ping"), object: "round", userInfo: ["seq": seq, "text": "é\(seq)"]) }
        #expect(echoes.wait(for: 3))
        #expect(echoes.values == ["round 1 é1", "round 2 é2", "round 3 é3"])
        #expect(echo.waitForExit(seconds: 20) == 0, "\(echo.output)")
        observation.remove()
    }

    @Test func twoProcessesPostingTenThousandEachAreReceivedWholeAndInPosterOrder() throws {
        let fixture = try RedisFixture()
        defer { fixture.shutDown() }
        let count = 10_000
        let received = Collector<String>()
        let observation = try fixture.center.addObserver(forName: .init("probe.stream"), on: fixture.thread.loop) { note in
            received.append("\(note.userInfo?["tag"] as? String ?? "?") \(note.userInfo?["seq"] as? Int ?? -1)")
        }
        let posters = try ["a", "b"].map { tag in
            try StreamingProcess(Self.probe, ["post", "\(fixture.server.port)", "probe.stream", "\(count)", tag])
        }
        defer { posters.forEach { $0.stop() } }
        for poster in posters { #expect(poster.waitForExit(seconds: 90) == 0, "\(poster.output)") }
        #expect(received.wait(for: 2 * count, seconds: 60))
        var next = ["a": 1, "b": 1]
        var outOfOrder = 0
        for entry in received.values {
            let parts = entry.split(separator: " ")
            let tag = String(parts[0]), seq = Int(parts[1]) ?? -1
            if next[tag] == seq { next[tag] = seq + 1 } else { outOfOrder += 1 }
        }
        #expect(outOfOrder == 0)
        #expect(next == ["a": count + 1, "b": count + 1])
        #expect(received.values.count == 2 * count)
        #expect(fixture.center.metrics.malformedDropped == 0)
        observation.remove()
    }
}
