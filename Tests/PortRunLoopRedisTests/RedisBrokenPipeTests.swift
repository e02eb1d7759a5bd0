import Foundation
import Testing
import PortRunLoopTestSupport

/// A process with a Redis center survives writes to a connection the server closed: SIGPIPE is
/// ignored once the center exists (it had its default action before), checked in a real process.
@Suite(.timeLimit(.minutes(1))) struct RedisBrokenPipeTests {
    /// Whether `pid`'s ignored-signals mask (`/proc/<pid>/status`, SigIgn) holds SIGPIPE.
    static func ignoresBrokenPipe(_ pid: Int32) throws -> Bool {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("SigIgn:") })
        let mask = try #require(UInt64(line.dropFirst("SigIgn:".count).trimmingCharacters(in: .whitespaces), radix: 16))
        return mask & (1 << (UInt64(SIGPIPE) - 1)) != 0
    }

    @Test func aProcessWithARedisCenterIgnoresSIGPIPE() throws {
        let server = try RedisServer()
        defer { server.stop() }
        let probe = try StreamingProcess(RedisTwoProcessTests.probe, ["echo", "\(server.port)", "pipe.in", "pipe.out", "1"])
        defer { probe.stop() }
        #expect(probe.wait(for: "ready\n"), "\(probe.output)")
        #expect(try Self.ignoresBrokenPipe(probe.pid))
        // And it goes on after its server was killed under it (a loss, not a signal).
        server.kill()
        try server.restart()
        try server.cli(["PUBLISH", "portrunloop.notification.pipe.in", #"{"v":1,"name":"pipe.in"}"#])
        // The probe exits 0 once it echoed one notification; it may have missed the PUBLISH above if
        // it was not resubscribed yet, so publish until it is done (bounded).
        var status = probe.waitForExit(seconds: 0.5)
        for _ in 0..<40 where status == nil {
            try server.cli(["PUBLISH", "portrunloop.notification.pipe.in", #"{"v":1,"name":"pipe.in"}"#])
            status = probe.waitForExit(seconds: 0.5)
        }
        #expect(status == 0, "\(probe.output)")
    }
}
