import Foundation
import PortRunLoopDBus

/// A private `dbus-daemon --session` on a Unix socket in a temporary directory: started by `init`
/// (which waits, at most 10 s, for the daemon to print its address) and stopped by ``stop()``
/// (SIGKILL, waited for: the daemon keeps nothing worth a clean exit, and a child of a process
/// that blocks SIGTERM may inherit it blocked). Never the session or system bus.
///
/// Thread-safety: `Sendable`; every member may be called from any thread.
public final class PrivateBus: @unchecked Sendable {
    /// The directory holding the bus socket (removed by ``stop()``).
    public let directory: URL
    /// The daemon's address (`unix:path=…,guid=…`).
    public let address: String
    private let process: StreamingProcess
    private let stopped = NSLock()
    private var isStopped = false // guarded by `stopped`

    /// Starts the daemon, through `launcher` when given (see ``StreamingProcess``).
    public init(launcher: [String] = []) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("portrunloop-bus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        process = try StreamingProcess("/usr/bin/dbus-daemon", ["--session", "--nofork", "--nopidfile", "--print-address",
                                                               "--address=unix:path=\(directory.path)/bus"], launcher: launcher)
        guard let line = process.line(containing: "unix:path=", seconds: 10) else {
            process.stop()
            try? FileManager.default.removeItem(at: directory)
            throw PrivateBusError.noAddress
        }
        address = line.trimmingCharacters(in: .whitespaces)
    }

    /// The endpoint for centers on this bus.
    public var endpoint: BusEndpoint { .dbus(address: address) }

    /// The daemon's process id.
    public var pid: Int32 { process.pid }

    /// Kills the daemon at once (SIGKILL), as a crash would, and waits for it to exit (at most
    /// 5 s; false if it had not).
    @discardableResult
    public func kill() -> Bool { process.stop() }

    /// Stops the daemon and removes its directory. Idempotent. False if the daemon had not exited
    /// 5 s after SIGKILL.
    @discardableResult
    public func stop() -> Bool {
        let first = stopped.withLock { defer { isStopped = true }; return !isStopped }
        guard first else { return true }
        let exited = process.stop()
        try? FileManager.default.removeItem(at: directory)
        return exited
    }

    deinit { stop() }
}

/// Why a private daemon could not be used.
///
/// Thread-safety: `Sendable`; immutable.
public enum PrivateBusError: Error {
    /// The daemon did not print its address within 10 s.
    case noAddress
    /// A round trip through the bus did not come back in time.
    case roundTripTimedOut
}
