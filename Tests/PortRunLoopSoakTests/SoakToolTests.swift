import Foundation
import PortRunLoopTestSupport
import Testing

/// The soak tool (`portrunloop-soak`, built next to the test bundle), run for seconds: every load
/// at once (ports, performs, timers, pipes, stream connections, notifications, a peer process
/// killed and restarted, D-Bus, Redis killed and restarted), with a short report interval. One
/// soak at a time, niced, at a fraction of its rates, and every wait off the cooperative pool:
/// the soak is a CPU load of its own, and the suite's other tests run beside it.
@Suite(.serialized, .timeLimit(.minutes(2))) struct SoakToolTests {
    private static let nice = "/usr/bin/nice"
    private static let niceness = ["-n", "10"]

    private static var tool: String {
        Bundle.main.executableURL!.deletingLastPathComponent().appendingPathComponent("portrunloop-soak").path
    }

    /// A short run prints a report line per interval and a JSON form of it, restarts the peer and
    /// the Redis server, loses nothing, and passes (status 0). Its memory is not judged: over 8
    /// seconds the slope is the allocator settling (and, under ThreadSanitizer, its shadow memory
    /// growing), so the noise bound is set above what such a run can grow.
    @Test func shortRunReportsAndPasses() async throws {
        let soak = try StreamingProcess(Self.tool, ["--duration", "8", "--report-interval", "2", "--json", "--peer-restart", "3",
                                                    "--redis-restart", "3", "--observer-churn", "0.5", "--rate", "0.2",
                                                    "--rss-noise-mb", "1024"],
                                        launcher: [Self.nice] + Self.niceness)
        defer { soak.stop() }
        let status = await offThePool { soak.waitForExit(seconds: 100) }
        let output = soak.output
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
        let soak = try await Self.startLongSoak()
        defer { _ = soak.stop() } // already stopped, unless an expectation failed first
        let children = Self.childPIDs(soak.output)
        #expect(children.count >= 3, "\(soak.output)")
        kill(soak.pid, SIGTERM)
        let status = await offThePool { soak.waitForExit(seconds: 90) }
        #expect(status == 130, "\(soak.output)")
        #expect(soak.output.contains("soak: stopping on signal 15"), "\(soak.output)")
        #expect(soak.output.contains("soak: PASS"), "\(soak.output)")
        for pid in children { #expect(!Self.isRunning(pid), "child \(pid) outlived the soak") }
    }

    /// A soak of 10 minutes, once it printed its first line (at most 60 s; then it is stopped and
    /// the test fails).
    private static func startLongSoak() async throws -> StreamingProcess {
        let soak = try StreamingProcess(tool, ["--duration", "600", "--report-interval", "1", "--rate", "0.1"],
                                        launcher: [nice] + niceness)
        let reported = await offThePool { soak.wait(for: "  delivered ", seconds: 60) }
        guard reported else {
            await offThePool { _ = soak.stop() }
            throw SoakDidNotReport(output: soak.output)
        }
        return soak
    }

    /// A soak killed outright (SIGKILL: no teardown runs) takes its daemons and peer with it.
    @Test func childrenDieWithAKilledSoak() async throws {
        let soak = try await Self.startLongSoak()
        defer { _ = soak.stop() } // already stopped, unless an expectation failed first
        let children = Self.childPIDs(soak.output)
        #expect(children.count >= 3, "\(soak.output)")
        await offThePool { _ = soak.stop() }
        for pid in children {
            let gone = await offThePool { eventually(seconds: 10) { !Self.isRunning(pid) } }
            #expect(gone, "child \(pid) outlived the killed soak")
        }
    }

    struct SoakDidNotReport: Error, CustomStringConvertible {
        let output: String
        var description: String { "the soak printed no report line within 60 s:\n\(output)" }
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
private func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}
