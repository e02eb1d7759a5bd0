import Foundation

/// A child process whose output (stdout and stderr) is collected as it comes, so a caller can wait
/// for a line; stopped by ``stop()`` (SIGKILL, waited for), and killed when released. Every wait is
/// bounded.
///
/// Thread-safety: `Sendable`; `text` is guarded by `condition`, `stopped` by its own lock.
public final class StreamingProcess: @unchecked Sendable {
    /// The process.
    public let process = Process()
    private let condition = NSCondition()
    private var text = "" // guarded by `condition`
    private let exited = DispatchSemaphore(value: 0)
    /// Signalled once the reader has seen the end of the output (the last chunk is in `text`).
    private let drained = DispatchSemaphore(value: 0)
    private let stopped = NSLock()
    private var isStopped = false // guarded by `stopped`

    /// Starts `path` with `arguments`, and `environment` added to this process's environment.
    /// With a `launcher` (a command and its arguments, such as `setpriv …` or a program that
    /// arranges for the child to die with its parent), runs `launcher + [path] + arguments`.
    public init(_ path: String, _ arguments: [String], environment: [String: String] = [:],
                launcher: [String] = []) throws {
        process.executableURL = URL(fileURLWithPath: launcher.first ?? path)
        process.arguments = launcher.isEmpty ? arguments : Array(launcher.dropFirst()) + [path] + arguments
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
        let drained = self.drained
        Thread.detachNewThread { [condition] in
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                condition.lock()
                self.append(String(decoding: chunk, as: UTF8.self))
                condition.broadcast()
                condition.unlock()
            }
            try? reader.close()
            drained.signal()
        }
    }

    private func append(_ chunk: String) { text += chunk } // called with `condition` locked

    /// Everything the process wrote so far.
    public var output: String {
        condition.lock(); defer { condition.unlock() }
        return text
    }

    /// The process id.
    public var pid: Int32 { process.processIdentifier }

    /// Whether the process is still running.
    public var isRunning: Bool { process.isRunning }

    /// Waits until the output contains `needle`, at most `seconds`.
    public func wait(for needle: String, seconds: Double = 20) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock(); defer { condition.unlock() }
        while !text.contains(needle) {
            if !condition.wait(until: deadline) { return text.contains(needle) }
        }
        return true
    }

    /// Waits (at most `seconds`) until a whole line (ended by a newline) containing `needle` was
    /// written; returns that line, without its newline, or nil.
    public func line(containing needle: String, seconds: Double = 20) -> String? {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock(); defer { condition.unlock() }
        while true {
            if let line = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().first(where: { $0.contains(needle) }) {
                return String(line)
            }
            if !condition.wait(until: deadline) { return nil }
        }
    }

    /// Waits for the process to exit on its own, at most `seconds`; its status, or nil if it did not.
    public func waitForExit(seconds: Double) -> Int32? {
        guard exited.wait(timeout: .now() + seconds) == .success else { return nil }
        exited.signal() // keep it signalled for stop()
        // The output's last chunk may still be on its way to the reader: wait for the end of it.
        if drained.wait(timeout: .now() + 5) == .success { drained.signal() }
        return process.terminationStatus
    }

    /// Kills the process (SIGKILL) and waits for it, at most 5 s. Idempotent. Returns false when
    /// it had not exited 5 s after the signal.
    @discardableResult
    public func stop() -> Bool {
        let first = stopped.withLock { defer { isStopped = true }; return !isStopped }
        guard first else { return true }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        guard exited.wait(timeout: .now() + 5) == .success else { return false }
        exited.signal()
        return true
    }

    deinit { stop() }
}
