import Foundation

/// A program the demo starts (a private `dbus-daemon`, `dbus-monitor`, a second process of the
/// demo), with its stdout on a pipe read line by line, every wait bounded. Stopped with ``stop()``
/// (SIGTERM, then SIGKILL after a second). Driven by one thread.
final class DemoChildProcess {
    private let process = Process()
    private let output = Pipe()
    private var buffered = [UInt8]()
    private var closed = false
    let label: String

    /// Starts `executable` with `arguments`; its stderr goes to `/dev/null` unless `keepStderr`.
    init(_ executable: String, _ arguments: [String], label: String, keepStderr: Bool = false) throws {
        self.label = label
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        if !keepStderr { process.standardError = FileHandle.nullDevice }
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    /// The next line it printed (without the newline), or nil if none came within `timeout` or it
    /// closed its stdout.
    func readLine(timeout: TimeInterval) -> String? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        let fd = output.fileHandleForReading.fileDescriptor
        while true {
            if let newline = buffered.firstIndex(of: 10) {
                let line = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeSubrange(...newline)
                return line
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0, !closed else { return nil }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(left * 1000 + 1, 60_000)))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { closed = true; continue }
            buffered.append(contentsOf: chunk[..<n])
        }
    }

    /// Every line until it closes its stdout or `timeout` passes.
    func remainingLines(timeout: TimeInterval) -> [String] {
        let deadline = Date(timeIntervalSinceNow: timeout)
        var lines: [String] = []
        while let line = readLine(timeout: max(deadline.timeIntervalSinceNow, 0)) { lines.append(line) }
        return lines
    }

    /// Waits at most `timeout` for it to exit by itself; its exit status, or nil if it is still running.
    func waitForExit(timeout: TimeInterval) -> Int32? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while process.isRunning && Date() < deadline { usleep(2_000) }
        guard !process.isRunning else { return nil }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// SIGTERM, then SIGKILL if it has not exited within a second; reaps it.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        if waitForExit(timeout: 1) == nil {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// The absolute path of `program` on `PATH` (the usual Debian places if `PATH` is unset), or nil.
    static func find(_ program: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        let folders = path.split(separator: ":").map(String.init)
        return folders.map { "\($0)/\(program)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// This program's own executable (for a second process of the demo).
    static var ownExecutable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }
}
