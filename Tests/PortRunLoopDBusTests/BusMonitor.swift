import Foundation
import Testing

/// `dbus-monitor` against a private bus, its output collected as it comes; stopped by ``stop()``.
final class BusMonitor: @unchecked Sendable {
    private let process = Process()
    private let condition = NSCondition()
    private var text = "" // guarded by `condition`
    private let exited = DispatchSemaphore(value: 0)

    init(address: String, rule: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-monitor")
        process.arguments = ["--address", address, rule]
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

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        _ = exited.wait(timeout: .now() + 5)
    }
}
