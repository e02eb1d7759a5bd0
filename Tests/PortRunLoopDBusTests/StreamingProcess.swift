import Foundation
import Testing

/// A child process (a probe, `dbus-monitor`) whose output is collected as it comes; killed by
/// ``stop()`` if still running.
final class StreamingProcess: @unchecked Sendable {
    private let process = Process()
    private let condition = NSCondition()
    private var text = "" // guarded by `condition`
    private let exited = DispatchSemaphore(value: 0)
    /// Signalled once the reader has seen the end of the output (the last chunk is in `text`).
    private let drained = DispatchSemaphore(value: 0)

    init(_ executable: URL, _ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let exited = self.exited
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        let reader = pipe.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                condition.lock()
                text += String(decoding: chunk, as: UTF8.self)
                condition.broadcast()
                condition.unlock()
            }
            drained.signal()
        }
    }

    var output: String {
        condition.lock(); defer { condition.unlock() }
        return text
    }

    /// Waits until the output contains `needle`, at most `seconds`.
    func wait(for needle: String, seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock(); defer { condition.unlock() }
        while !text.contains(needle) {
            if !condition.wait(until: deadline) { return text.contains(needle) }
        }
        return true
    }

    /// `dbus-monitor` on a private bus, for signals matching `rule`.
    static func monitor(address: String, rule: String) throws -> StreamingProcess {
        try StreamingProcess(URL(fileURLWithPath: "/usr/bin/dbus-monitor"), ["--address", address, rule])
    }

    /// Waits for the process to exit, at most `seconds`; its status, or nil on timeout.
    func waitForExit(seconds: Double) -> Int32? {
        guard exited.wait(timeout: .now() + seconds) == .success else { return nil }
        exited.signal()
        // The output's last chunk may still be on its way to the reader: wait for the end of it.
        if drained.wait(timeout: .now() + 5) == .success { drained.signal() }
        return process.terminationStatus
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        _ = exited.wait(timeout: .now() + 5)
    }
}
