import Foundation
import PortRunLoopDBus
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A private `dbus-daemon --session` on a Unix socket in a temporary directory, for one test:
/// started by `init` (which waits, at most 10 s, for the daemon to print its address) and stopped
/// by ``stop()`` (SIGKILL, waited for: the daemon keeps nothing worth a clean exit, and a child of
/// the test process may inherit SIGTERM blocked).
final class PrivateBus: @unchecked Sendable {
    let directory: URL
    let address: String
    private let process: Process
    private let exited = DispatchSemaphore(value: 0)
    private let stopped = PortRunLoopTestSupport.Locked(false)

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("portrunloop-bus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        process.arguments = ["--session", "--nofork", "--nopidfile", "--print-address",
                             "--address=unix:path=\(directory.path)/bus"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let exited = self.exited
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        let line = PortRunLoopTestSupport.Locked<String?>(nil)
        let printed = DispatchSemaphore(value: 0)
        let reader = output.fileHandleForReading
        Thread.detachNewThread {
            var text = ""
            while !text.contains("\n") {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            line.withLock { $0 = text.split(separator: "\n").first.map(String.init) }
            printed.signal()
        }
        guard printed.wait(timeout: .now() + 10) == .success, let address = line.withLock({ $0 }), !address.isEmpty else {
            Foundation.kill(process.processIdentifier, SIGKILL)
            throw PrivateBusError.noAddress
        }
        self.address = address
    }

    /// The endpoint for centers on this bus.
    var endpoint: BusEndpoint { .dbus(address: address) }

    /// The daemon's process id.
    var pid: Int32 { process.processIdentifier }

    /// Kills the daemon at once (SIGKILL), as a crash would, and waits for it to exit.
    func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        waitForExit()
    }

    /// Stops the daemon and removes its directory. Idempotent.
    func stop() {
        guard stopped.withLock({ state in defer { state = true }; return !state }) else { return }
        if process.isRunning {
            Foundation.kill(process.processIdentifier, SIGKILL)
            if exited.wait(timeout: .now() + 5) == .timedOut { Issue.record("dbus-daemon did not exit within 5 s of SIGKILL") }
        }
        try? FileManager.default.removeItem(at: directory)
    }

    private func waitForExit() {
        if exited.wait(timeout: .now() + 5) == .timedOut { Issue.record("dbus-daemon did not exit within 5 s") }
        exited.signal() // keep the semaphore signalled for stop()
    }

    deinit { stop() }
}

enum PrivateBusError: Error {
    case noAddress
    /// A round trip through the bus (``BusFixture/sync(_:)``) did not come back in time.
    case roundTripTimedOut
}

