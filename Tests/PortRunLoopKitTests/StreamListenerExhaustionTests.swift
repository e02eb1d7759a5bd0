import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A listener out of file descriptors does not spin, and accepts the waiting connection once
/// descriptors free. Run in the `StreamServerProbe` process, which lowers its own descriptor limit
/// and takes every descriptor left (this process cannot without starving the tests beside it).
@Suite(.timeLimit(.minutes(1))) struct StreamListenerExhaustionTests {
    @Test func anExhaustedListenerPausesWithoutSpinningAndRecovers() throws {
        let path = Bundle.main.executableURL!.deletingLastPathComponent().appendingPathComponent("StreamServerProbe").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            Issue.record("StreamServerProbe was not built at \(path) (build the package first)")
            return
        }
        let probe = try StreamingProcess(path, [])
        defer { probe.stop() }
        #expect(probe.wait(for: "LISTENING "))
        let port = try #require(probe.output.split(separator: "\n").first { $0.hasPrefix("LISTENING ") }
            .flatMap { Int($0.dropFirst("LISTENING ".count)) })

        let client = try RunLoopThread(name: "exhaustion-client")
        defer { client.stop() }
        let received = Locked<[UInt8]>([])
        let greeted = Signal()
        StreamConnection.connect(to: .host("127.0.0.1", port: port), on: client.loop) { result in
            guard case .success(let connection) = result else { Issue.record("\(result)"); greeted.fire(); return }
            connection.onRead = { _, bytes in
                received.withLock { $0.append(contentsOf: bytes) }
            }
            connection.onEvent = { _, event in
                if case .closed = event { greeted.fire() }
            }
        }
        #expect(probe.wait(for: "PAUSED"))
        #expect(probe.wait(for: "RECOVERED"))
        #expect(greeted.wait())
        #expect(received.withLock { $0 } == Array("hi".utf8))
        let output = probe.output
        #expect(output.contains("RECOVERED 1"), "probe output:\n\(output)")
        // CPU over 500 ms of exhaustion: a spinning listener burns ~500 ms; a paused one a few.
        let cpuLine = try #require(output.split(separator: "\n").first { $0.hasPrefix("CPU ") })
        let fields = cpuLine.split(separator: " ")
        let cpu = try #require(Int(fields[1]))
        let pauses = try #require(Int(fields[3]))
        #expect(cpu < 100, "CPU while exhausted: \(cpu) ms of 500; output:\n\(output)")
        // Backing off from 10 ms, doubling: a handful of looks in half a second, not thousands.
        #expect(pauses >= 2 && pauses <= 12, "pauses: \(pauses)")
    }
}
