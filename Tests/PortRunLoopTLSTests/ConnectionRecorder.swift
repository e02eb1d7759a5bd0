import Foundation
import PortRunLoopKit
import PortRunLoopTLS
import PortRunLoopTestSupport

/// What one side of a test connection saw, in order.
///
/// Thread-safety: a value type; `Sendable`.
enum PeerRecord: Sendable {
    /// The connection opened (after its handshake), with what the handshake settled.
    case connected(TLSConnectionDetails?)
    /// The connect (or handshake) failed.
    case failed(StreamConnectionError)
    case bytes([UInt8])
    case event(StreamConnectionEvent)
}

extension Array where Element == PeerRecord {
    /// Every byte received, in order.
    var receivedBytes: [UInt8] {
        flatMap { record -> [UInt8] in if case .bytes(let bytes) = record { bytes } else { [] } }
    }
    var receivedText: String { String(decoding: receivedBytes, as: UTF8.self) }
    /// The events, in order.
    var events: [StreamConnectionEvent] {
        compactMap { record in if case .event(let event) = record { event } else { nil } }
    }
    var details: TLSConnectionDetails? {
        for case .connected(let details) in self { return details }
        return nil
    }
    var connectFailure: StreamConnectionError? {
        for case .failed(let error) in self { return error }
        return nil
    }
    /// The error the connection closed with (`.some(nil)`: closed cleanly), nil while open.
    var closeError: StreamConnectionError?? {
        for case .event(.closed(let error)) in self { return .some(error) }
        return nil
    }
    /// Whether the connection ended, by a failed connect or a close.
    var isFinished: Bool { connectFailure != nil || closeError != nil }
}

/// One side of a test connection on a loop: records what it receives and what happens to it
/// (``log``), and lets the test act on the connection from its own thread (``perform(_:)``).
///
/// Thread-safety: `Sendable`; `connection` is touched on `loop`'s thread only (every access runs
/// there: in the connection's handlers or through `loop.perform`).
final class ConnectionRecorder: @unchecked Sendable {
    let loop: PortRunLoop
    let log = Collector<PeerRecord>()
    private let onBytes: (@Sendable (StreamConnection, [UInt8]) -> Void)?
    private var connection: StreamConnection? // the loop's thread only

    /// A recorder on `loop`; `onBytes` runs on the loop's thread after each run of bytes is logged.
    init(loop: PortRunLoop, onBytes: (@Sendable (StreamConnection, [UInt8]) -> Void)? = nil) {
        self.loop = loop
        self.onBytes = onBytes
    }

    /// Takes `connection` (on its loop's thread): logs its details, then its bytes and events.
    func attach(_ connection: StreamConnection) {
        self.connection = connection
        log.append(.connected(connection.tlsDetails))
        connection.onRead = { [self] connection, bytes in
            let copy = Array(bytes)
            log.append(.bytes(copy))
            onBytes?(connection, copy)
        }
        connection.onEvent = { [self] _, event in
            log.append(.event(event))
            if case .closed = event { self.connection = nil }
        }
    }

    /// Connects over TLS and attaches the connection (or logs the failure).
    func connect(to endpoint: SocketEndpoint, context: TLSContext, serverName: String? = nil,
                 options: StreamConnection.Options = StreamConnection.Options(), timeout: Double = 10) {
        StreamConnection.connectTLS(to: endpoint, on: loop, context: context, serverName: serverName, timeout: timeout,
                                    options: options) { [self] result in
            switch result {
            case .success(let connection): attach(connection)
            case .failure(let error): log.append(.failed(error))
            }
        }
    }

    /// Runs `body` with the connection on its loop's thread (not at all once it closed).
    func perform(_ body: @escaping @Sendable (StreamConnection) -> Void) {
        _ = loop.perform { [self] in
            if let connection { body(connection) }
        }
    }
}

/// `openssl s_server` on a free loopback port (`-accept 127.0.0.1:0`, the port read from its
/// `ACCEPT` line), in `-rev` mode (it sends each line back reversed, and never reads its stdin).
///
/// Thread-safety: `Sendable` (its process is).
final class OpenSSLServer: Sendable {
    let process: StreamingProcess
    let port: Int

    init(_ arguments: [String]) throws {
        let process = try StreamingProcess(TestCertificates.openssl, ["s_server", "-accept", "127.0.0.1:0", "-rev"] + arguments)
        let pattern = /ACCEPT 127\.0\.0\.1:(\d+)\n/
        var found: Int?
        _ = process.wait(for: "ACCEPT")
        _ = eventually { found = (try? pattern.firstMatch(in: process.output)).flatMap { Int($0.1) }; return found != nil }
        guard let found else {
            process.stop()
            throw SetupFailure(description: "openssl s_server did not listen: \(process.output)")
        }
        self.process = process
        port = found
    }

    deinit { process.stop() }
}
