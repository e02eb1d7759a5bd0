import Foundation

/// A TLS tunnel in front of a server that speaks only TLS: a real `stunnel4` in client mode,
/// listening on 127.0.0.1 and a random free port (``port``), which opens, for each plain
/// connection accepted there, a TLS connection to 127.0.0.1 and `targetPort`, and refuses a server
/// whose certificate chain does not end at `caFile` (`verifyChain`) or whose certificate does not
/// name `checkHost` (`checkHost`). Started by `init`, which waits (at most 10 s) for stunnel's
/// "Accepting new connections", logged once it listens; stopped by ``stop()`` or release. Its
/// configuration lives in a temporary directory of its own.
///
/// Thread-safety: `Sendable`; every member may be called from any thread.
public final class StunnelTunnel: @unchecked Sendable {
    /// `stunnel4` (installed by Scripts/install-deps.sh).
    public static let path = "/usr/bin/stunnel4"

    /// The port on 127.0.0.1 that takes plain connections.
    public let port: Int
    private let directory: String
    private let process: StreamingProcess

    /// Starts the tunnel to `127.0.0.1:targetPort`.
    public init(toPort targetPort: Int, caFile: String, checkHost: String) throws {
        port = try freeLoopbackPort()
        directory = NSTemporaryDirectory() + "prl-stunnel-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let configuration = """
            foreground = yes
            pid =
            debug = 6
            [redis]
            client = yes
            accept = 127.0.0.1:\(port)
            connect = 127.0.0.1:\(targetPort)
            verifyChain = yes
            CAfile = \(caFile)
            checkHost = \(checkHost)

            """
        let file = directory + "/stunnel.conf"
        try configuration.write(toFile: file, atomically: true, encoding: .utf8)
        process = try StreamingProcess(Self.path, [file])
        guard process.wait(for: "Accepting new connections", seconds: 10) else {
            let output = process.output
            process.stop()
            try? FileManager.default.removeItem(atPath: directory)
            throw StunnelTunnelError.notReady(output)
        }
    }

    /// What stunnel logged so far (its connections, and the certificates it accepted or refused).
    public var output: String { process.output }

    /// Waits (at most `seconds`) until stunnel logged `needle` at least `count` times; false if it
    /// had not.
    public func waitForLog(_ needle: String, count: Int = 1, seconds: Double = 10) -> Bool {
        process.wait(seconds: seconds) { $0.components(separatedBy: needle).count - 1 >= count }
    }

    /// Stops the tunnel (SIGKILL, waited for) and removes its directory. Idempotent.
    public func stop() {
        process.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { stop() }
}

/// Why a tunnel could not be started.
///
/// Thread-safety: `Sendable`; immutable.
public enum StunnelTunnelError: Error {
    /// stunnel did not start listening; its output.
    case notReady(String)
}
