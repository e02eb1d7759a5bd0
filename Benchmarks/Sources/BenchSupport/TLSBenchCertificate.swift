import Foundation

/// The server certificate of the TLS echo scenarios: a self-signed ECDSA P-256 certificate for
/// `localhost` and its key, made with the `openssl` command-line tool in a directory of its own
/// (removed when released). Every server of a scenario loads the same files, so each does the same
/// signature per handshake.
///
/// Thread-safety: `Sendable`; immutable once made.
public final class TLSBenchCertificate: Sendable {
    /// The `openssl` tool.
    ///
    /// Thread-safety: a constant.
    public static let openssl = "/usr/bin/openssl"

    private let directory: String

    /// The certificate (PEM).
    ///
    /// Thread-safety: immutable.
    public var certificatePath: String { directory + "/server.pem" }
    /// Its private key (PEM, not encrypted).
    ///
    /// Thread-safety: immutable.
    public var keyPath: String { directory + "/server.key" }

    /// Makes the directory and the certificate.
    ///
    /// Thread-safety: any thread.
    public init() throws {
        directory = NSTemporaryDirectory() + "prl-tlsbench-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.openssl)
        process.arguments = ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                             "-keyout", directory + "/server.key", "-out", directory + "/server.pem", "-days", "2",
                             "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw TLSBenchSetupFailure(description: "openssl req failed (\(process.terminationStatus))")
            }
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }
}

/// A TLS scenario's set-up that could not be done, with its words.
///
/// Thread-safety: a value type; `Sendable`.
public struct TLSBenchSetupFailure: Error, CustomStringConvertible {
    /// What failed.
    ///
    /// Thread-safety: immutable.
    public let description: String
}
