import Foundation
import PortRunLoopDBus
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Notifications between real processes: the `BusNotificationProbe` executable
/// (Tests/Probes/BusNotificationProbe), which `swift build` / `swift test` build next to the test
/// bundle, runs a center on its own main thread's `PortRunLoop.main`.
@Suite(.timeLimit(.minutes(2))) struct BusNotificationTwoProcessTests {
    private func probe(_ arguments: [String], environment: [String: String] = [:]) throws -> StreamingProcess {
        let url = Bundle.main.executableURL!.deletingLastPathComponent().appendingPathComponent("BusNotificationProbe")
        try #require(FileManager.default.isExecutableFile(atPath: url.path), "BusNotificationProbe was not built at \(url.path)")
        return try StreamingProcess(url.path, arguments, environment: environment)
    }

    @Test func anotherProcessReceivesWhatThisOnePosts() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let observer = try probe(["observe", fixture.bus.address, "cross.process", "5"])
        defer { observer.stop() }
        #expect(observer.wait(for: "ready", seconds: 30))
        for seq in 0..<5 { try fixture.center.post(name: .init("cross.process"), userInfo: ["poster": "test", "seq": seq]) }
        #expect(observer.waitForExit(seconds: 30) == 0, "\(observer.output)")
        #expect(observer.output.contains("received 5 ordered true"), "\(observer.output)")
    }

    /// `.session` and `.system` find their bus through libdbus's environment variables (pointed here
    /// at the private daemon, in the probe's environment only).
    @Test(arguments: [("session", "DBUS_SESSION_BUS_ADDRESS"), ("system", "DBUS_SYSTEM_BUS_ADDRESS")])
    func sessionAndSystemEndpointsUseTheirBusAddress(endpoint: String, variable: String) throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let observer = try probe(["observe", endpoint, "by.endpoint", "1"], environment: [variable: fixture.bus.address])
        defer { observer.stop() }
        #expect(observer.wait(for: "ready", seconds: 30), "\(observer.output)")
        try fixture.center.post(name: .init("by.endpoint"), userInfo: ["poster": "test", "seq": 0])
        #expect(observer.waitForExit(seconds: 30) == 0, "\(observer.output)")
        #expect(observer.output.contains("received 1 ordered true"), "\(observer.output)")
    }

    @Test func twoProcessesPostTenThousandEachNoneLostOrderKept() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let perPoster = 10_000
        let state = PortRunLoopTestSupport.Locked((count: 0, last: [String: Int](), ordered: true))
        let all = Collector<Int>()
        let observation = try fixture.center.addObserver(forName: .init("load"), suspensionBehavior: .hold, on: fixture.thread.loop) { note in
            let poster = note.userInfo?["poster"] as? String ?? "?"
            let seq = note.userInfo?["seq"] as? Int ?? -1
            state.withLock { state in
                if seq != (state.last[poster] ?? -1) + 1 { state.ordered = false }
                state.last[poster] = seq
                state.count += 1
            }
            all.append(seq)
        }
        let posters = try ["A", "B"].map { try probe(["post", fixture.bus.address, "load", "\(perPoster)", $0]) }
        defer { posters.forEach { $0.stop() } }
        #expect(all.wait(for: 2 * perPoster, seconds: 90))
        for poster in posters {
            #expect(poster.waitForExit(seconds: 30) == 0, "\(poster.output)")
        }
        try fixture.sync()
        let (count, last, ordered) = state.withLock { ($0.count, $0.last, $0.ordered) }
        #expect(count == 2 * perPoster)
        #expect(ordered)
        #expect(last == ["A": perPoster - 1, "B": perPoster - 1])
        #expect(fixture.center.metrics.received >= 2 * perPoster)
        observation.remove()
    }
}
