import Foundation
import PeerSupport
#if canImport(Glibc)
import Glibc
#endif

/// A child process of the benchmark with a line protocol on its stdin and stdout: the
/// cross-process peers (`CrossProcessBenchPeer`) and the private `dbus-daemon`.
///
/// Thread-safety: one driving thread (`@unchecked Sendable` only so a fixture can hold it).
public final class PeerProcess: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffered = [UInt8]()

    /// Starts `executable` with `arguments`; its stderr goes to the benchmark's.
    ///
    /// Thread-safety: any thread.
    public init(executable: String, arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    /// The next line the child printed, without its newline; throws when none came within
    /// `timeout` or the child closed its stdout.
    ///
    /// Thread-safety: the driving thread.
    public func readLine(timeout: Duration = .seconds(30)) throws -> String {
        let fd = output.fileHandleForReading.fileDescriptor
        let deadline = ProcessCounters.deadline(after: timeout)
        while true {
            if let newline = buffered.firstIndex(of: 10) {
                let line = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeSubrange(...newline)
                return line
            }
            let now = ProcessCounters.nanoseconds()
            guard now < deadline else { throw CrossProcessFailure("\(name): no answer within \(timeout)") }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min((deadline - now) / 1_000_000 + 1, 60_000)))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw CrossProcessFailure("\(name): exited (stdout closed)") }
            buffered.append(contentsOf: chunk[..<n])
        }
    }

    /// Writes `line` and a newline to the child's stdin.
    ///
    /// Thread-safety: the driving thread.
    public func send(_ line: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Waits for the line `expected`; any other line is an error.
    ///
    /// Thread-safety: the driving thread.
    public func expect(_ expected: String, timeout: Duration = .seconds(30)) throws {
        let line = try readLine(timeout: timeout)
        guard line == expected else { throw CrossProcessFailure("\(name): expected '\(expected)', got '\(line)'") }
    }

    /// SIGTERM, then SIGKILL if it has not exited within a second; reaps it.
    ///
    /// Thread-safety: the driving thread, once.
    public func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let deadline = ProcessCounters.deadline(after: .seconds(1))
        while process.isRunning && ProcessCounters.nanoseconds() < deadline { usleep(1000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    private var name: String { "\(process.executableURL?.lastPathComponent ?? "child") \(process.arguments ?? [])" }

    /// The path of an executable built beside the benchmark's own (`/proc/self/exe`'s folder), or an
    /// error saying how to build it.
    ///
    /// Thread-safety: any thread.
    public static func sibling(_ product: String) throws -> String {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let path = URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent(product).path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw CrossProcessFailure("\(path) is missing: build it first with "
                + "`swift build -c release --product \(product)` in Benchmarks/ (Scripts/run-benchmarks.sh does)")
        }
        return path
    }
}

/// A private `dbus-daemon` (session configuration) on a Unix socket in `directory`, for the D-Bus
/// rows; stopped with ``stop()``.
///
/// Thread-safety: one driving thread.
public final class PrivateBus: @unchecked Sendable {
    /// The bus address (`unix:path=…,guid=…`).
    ///
    /// Thread-safety: immutable.
    public let address: String
    private let daemon: PeerProcess

    /// Starts the daemon and reads its address.
    ///
    /// Thread-safety: any thread.
    public init(directory: String) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon") else {
            throw CrossProcessFailure("dbus-daemon is missing: Scripts/install-deps.sh dbus libdbus-1-dev")
        }
        daemon = try PeerProcess(executable: "/usr/bin/dbus-daemon",
                                 arguments: ["--session", "--nofork", "--nopidfile", "--print-address=1",
                                             "--address=unix:path=\(directory)/bus"])
        address = try daemon.readLine(timeout: .seconds(10))
    }

    /// Stops the daemon.
    ///
    /// Thread-safety: the driving thread, once.
    public func stop() { daemon.stop() }
}
