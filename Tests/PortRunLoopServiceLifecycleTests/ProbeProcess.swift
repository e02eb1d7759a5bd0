#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import PortRunLoopTestSupport

/// The `ServiceLifecycleProbe` program (Tests/Probes/ServiceLifecycleProbe), which `swift build` /
/// `swift test` build next to the test bundle, started with its standard output on a pipe that a
/// thread of its own reads line by line. Every wait is bounded; none is used for ordering.
final class ProbeProcess: @unchecked Sendable {
    private let process = Process()
    private let lock = NSLock()
    private var output = "" // guarded by `lock`
    private var awaited: (prefix: String, signal: Signal)? // guarded by `lock`
    private let outputEnded = Signal()
    private let exited = Signal()

    /// Starts the probe with `arguments`.
    init(_ arguments: [String]) throws {
        let probe = Bundle.main.executableURL!.deletingLastPathComponent().appendingPathComponent("ServiceLifecycleProbe")
        guard FileManager.default.isExecutableFile(atPath: probe.path) else {
            throw ProbeMissing(path: probe.path)
        }
        process.executableURL = probe
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.terminationHandler = { [exited] _ in exited.fire() }
        try process.run()
        let reading = pipe.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let data = reading.availableData
                if data.isEmpty { break }
                received(String(decoding: data, as: UTF8.self))
            }
            outputEnded.fire()
        }
    }

    /// Everything the probe printed so far.
    var printed: String { lock.withLock { output } }

    /// Waits (at most `seconds`) until the probe printed a line starting with `prefix`.
    func waitForLine(startingWith prefix: String, seconds: Double = 30) -> Bool {
        let signal = Signal()
        let present = lock.withLock { () -> Bool in
            if Self.hasLine(startingWith: prefix, in: output) { return true }
            awaited = (prefix, signal)
            return false
        }
        return present || signal.wait(seconds: seconds)
    }

    /// Sends `signal` to the probe.
    func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits (at most `seconds`) for the probe to exit and close its output; returns its exit
    /// status, or nil after killing it when it did not exit in time.
    func waitForExit(seconds: Double = 40) -> Int32? {
        guard exited.wait(seconds: seconds), outputEnded.wait(seconds: seconds) else {
            kill(process.processIdentifier, SIGKILL)
            return nil
        }
        return process.terminationStatus
    }

    private func received(_ text: String) {
        let signal = lock.withLock { () -> Signal? in
            output += text
            guard let awaited, Self.hasLine(startingWith: awaited.prefix, in: output) else { return nil }
            self.awaited = nil
            return awaited.signal
        }
        signal?.fire()
    }

    private static func hasLine(startingWith prefix: String, in text: String) -> Bool {
        text.split(separator: "\n").contains { $0.hasPrefix(prefix) }
    }
}

/// The probe program was not built.
struct ProbeMissing: Error, CustomStringConvertible {
    let path: String
    var description: String { "ServiceLifecycleProbe was not built at \(path) (build the package first)" }
}
