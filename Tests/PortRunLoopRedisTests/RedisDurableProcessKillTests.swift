import Foundation
import PortRunLoopKit
import PortRunLoopRedis
import Testing
import PortRunLoopTestSupport

/// Durable notifications across a killed process: an observing process (RedisNotificationProbe)
/// killed with SIGKILL mid-stream, and a new one with the same consumer name.
@Suite(.timeLimit(.minutes(2))) struct RedisDurableProcessKillTests {
    /// The values of `seq` a probe printed, in order.
    static func numbers(_ output: String) -> [Int] {
        output.split(separator: "\n").compactMap { $0.hasPrefix("seq ") ? Int($0.dropFirst(4)) : nil }
    }

    @Test func aKilledObserverProcessRestartedWithItsConsumerNameLosesNothingAndGetsNoAcknowledgedEntryTwice() throws {
        let server = try RedisServer()
        defer { server.stop() }
        let name = "cache.invalidated"
        let poster = try DurableMember("durable-poster", endpoint: DurableMember.endpoint(port: server.port,
                                                                                          durable: DurableMember.durable([name], group: "poster")))
        defer { poster.shutDown() }
        let arguments = ["observe-durable", "\(server.port)", name, "service", "worker-1"]
        let first = try StreamingProcess(RedisTwoProcessTests.probe, arguments)
        defer { first.stop() }
        #expect(first.wait(for: "ready\n"), "\(first.output)")
        for n in 1...100 { try poster.center.post(name: .init(name), userInfo: ["seq": n]) }
        #expect(first.wait(for: "seq 30\n"), "\(first.output)")
        first.stop() // SIGKILL, mid-stream
        let before = Self.numbers(first.output)
        let stream = "portrunloop.notification.\(name)"
        let unacknowledged = Int(try server.cli(["XPENDING", stream, "service"]).output.split(separator: "\n").first ?? "") ?? -1
        for n in 101...200 { try poster.center.post(name: .init(name), userInfo: ["seq": n]) }
        try poster.center.flushRedisPosts()

        let second = try StreamingProcess(RedisTwoProcessTests.probe, arguments)
        defer { second.stop() }
        #expect(second.wait(for: "seq 200\n"), "\(second.output)")
        let after = Self.numbers(second.output)
        let both = before + after
        #expect(Set(both) == Set(1...200), "\(before.count) + \(after.count)")
        // Delivered twice only what the killed process was handed and had not acknowledged.
        #expect(both.count - Set(both).count <= max(0, unacknowledged), "twice \(both.count - Set(both).count), pending \(unacknowledged)")
        #expect(before == before.sorted() && after == after.sorted())
    }
}
