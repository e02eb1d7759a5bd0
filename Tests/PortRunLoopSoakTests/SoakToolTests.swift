import Foundation
import PortRunLoopTestSupport
import Testing

/// The soak tool (`portrunloop-soak`, built next to the test bundle), run for seconds: every load
/// at once (ports, performs, timers, pipes, stream connections, notifications, a peer process
/// killed and restarted, D-Bus, Redis killed and restarted), with a short report interval.
@Suite(.timeLimit(.minutes(2))) struct SoakToolTests {
    private static var tool: String {
        Bundle.main.executableURL!.deletingLastPathComponent().appendingPathComponent("portrunloop-soak").path
    }

    /// A short run prints a report line per interval and a JSON form of it, restarts the peer and
    /// the Redis server, loses nothing, and passes (status 0).
    @Test func shortRunReportsAndPasses() async throws {
        let (status, output) = try await offThePool {
            try runTool(Self.tool, ["--duration", "8", "--report-interval", "2", "--json", "--peer-restart", "3",
                                    "--redis-restart", "3", "--observer-churn", "0.5"], seconds: 100)
        }
        let lines = output.split(separator: "\n").map(String.init)
        let reports = lines.filter { $0.hasPrefix("soak ") }
        #expect(status == 0, "\(output)")
        #expect(reports.count >= 4, "\(output)")
        #expect(reports.allSatisfy { $0.contains(" lost 0 ") && $0.contains(" violations 0 ") }, "\(output)")
        #expect(lines.contains("soak: PASS"), "\(output)")
        let last = try #require(lines.last { $0.hasPrefix("JSON {\"delivered\"") }, "\(output)")
        let figures = try #require(try JSONSerialization.jsonObject(with: Data(last.dropFirst(5).utf8)) as? [String: Any])
        #expect((figures["delivered"] as? Int ?? 0) > 1_000, "\(last)")
        let restarts = try #require(figures["restarts"] as? [String: Int], "\(last)")
        #expect(restarts["redis", default: 0] >= 1 && restarts["peer", default: 0] >= 1 && restarts["connections", default: 0] > 0, "\(last)")
    }

    /// SIGTERM stops the run: it stops the load, stops the daemons and the peer and reaps them,
    /// prints its verdict and exits with 130.
    @Test func sigtermStopsTheRunAndItsChildren() async throws {
        let soak = try StreamingProcess(Self.tool, ["--duration", "600", "--report-interval", "1"])
        defer { soak.stop() }
        #expect(soak.wait(for: "  delivered ", seconds: 60), "\(soak.output)")
        let children = Self.childPIDs(soak.output)
        #expect(children.count >= 3, "\(soak.output)")
        kill(soak.pid, SIGTERM)
        let status = await offThePool { soak.waitForExit(seconds: 90) }
        #expect(status == 130, "\(soak.output)")
        #expect(soak.output.contains("soak: stopping on signal 15"), "\(soak.output)")
        #expect(soak.output.contains("soak: PASS"), "\(soak.output)")
        for pid in children { #expect(!Self.isRunning(pid), "child \(pid) outlived the soak") }
    }

    /// A soak killed outright (SIGKILL: no teardown runs) takes its daemons and peer with it.
    @Test func childrenDieWithAKilledSoak() async throws {
        let soak = try StreamingProcess(Self.tool, ["--duration", "600", "--report-interval", "1"])
        defer { soak.stop() }
        #expect(soak.wait(for: "  delivered ", seconds: 60), "\(soak.output)")
        let children = Self.childPIDs(soak.output)
        #expect(children.count >= 3, "\(soak.output)")
        soak.stop()
        for pid in children {
            let gone = await offThePool { eventually(seconds: 10) { !Self.isRunning(pid) } }
            #expect(gone, "child \(pid) outlived the killed soak")
        }
    }

    /// The pids of the children the soak reported starting (`soak: started … pid N`).
    private static func childPIDs(_ output: String) -> [Int32] {
        output.split(separator: "\n").filter { $0.hasPrefix("soak: started ") }.compactMap { Int32($0.split(separator: " ").last ?? "") }
    }

    /// Whether `pid` is a live process (not gone, not a zombie waiting for its reaper).
    private static func isRunning(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(close, offsetBy: 2)] != "Z"
    }
}

/// Runs `body` on a thread of its own, so a blocking wait does not hold one of the few threads of
/// the cooperative pool that parallel async tests need.
private func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

private func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}
