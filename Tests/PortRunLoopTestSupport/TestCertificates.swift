import Foundation

/// Certificates made for one test with the `openssl` command-line tool, in a directory of their
/// own (removed when released): a CA, a server certificate for `localhost` and `127.0.0.1` signed
/// by it, a client certificate signed by it, and an unrelated CA. EC P-256 keys (fast to make).
///
/// Thread-safety: `Sendable`; immutable after it is made.
public final class TestCertificates: Sendable {
    /// The `openssl` command-line tool.
    public static let openssl = "/usr/bin/openssl"

    /// The directory the files are in (removed when released).
    public let directory: String

    /// The CA that signed the server and client certificates.
    public var caCertificate: String { directory + "/ca.pem" }
    public var serverCertificate: String { directory + "/server.pem" }
    public var serverKey: String { directory + "/server.key" }
    public var clientCertificate: String { directory + "/client.pem" }
    public var clientKey: String { directory + "/client.key" }
    /// A CA that signed nothing here.
    public var otherCACertificate: String { directory + "/other-ca.pem" }

    /// Makes the certificates (`openssl req` and `x509`); throws ``SetupFailure`` when a step fails.
    public init() throws {
        directory = NSTemporaryDirectory() + "prl-tls-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try makeAuthority(name: "ca", subject: "/CN=PortRunLoop Test CA")
        try makeAuthority(name: "other-ca", subject: "/CN=PortRunLoop Other CA")
        try makeLeaf(name: "server", subject: "/CN=localhost",
                     extensions: "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
        try makeLeaf(name: "client", subject: "/CN=test-client",
                     extensions: "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n")
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// The text of a file of the directory.
    public func text(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    private func openssl(_ arguments: [String]) throws {
        let (status, output) = try runTool(Self.openssl, arguments)
        guard status == 0 else { throw SetupFailure(description: "openssl \(arguments.joined(separator: " ")) failed (\(status)): \(output)") }
    }

    private func makeAuthority(name: String, subject: String) throws {
        try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                     "-keyout", "\(directory)/\(name).key", "-out", "\(directory)/\(name).pem", "-days", "2",
                     "-subj", subject, "-addext", "basicConstraints=critical,CA:TRUE",
                     "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
    }

    private func makeLeaf(name: String, subject: String, extensions: String) throws {
        let extensionsFile = "\(directory)/\(name).ext"
        try extensions.write(toFile: extensionsFile, atomically: true, encoding: .utf8)
        try openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                     "-keyout", "\(directory)/\(name).key", "-out", "\(directory)/\(name).csr", "-subj", subject])
        try openssl(["x509", "-req", "-in", "\(directory)/\(name).csr", "-CA", caCertificate, "-CAkey", "\(directory)/ca.key",
                     "-set_serial", "\(UInt32.random(in: 1...UInt32.max))", "-days", "2", "-extfile", extensionsFile,
                     "-out", "\(directory)/\(name).pem"])
    }
}

/// A test's setup that could not be done (a tool that failed), with its words.
///
/// Thread-safety: a value type; `Sendable`.
public struct SetupFailure: Error, CustomStringConvertible {
    /// What failed, and the tool's output.
    public let description: String

    /// A failure described by `description`.
    public init(description: String) { self.description = description }
}
