import Foundation
import PeerSupport

/// Idle TCP connections to an echo server, held open by a second process
/// (`CrossProcessBenchPeer idle-connect`) that sends nothing on them: the benchmark process keeps
/// only the server's ends, so 10,000 of them fit under a hard `RLIMIT_NOFILE` of 20,000, which
/// both ends in one process would not.
///
/// Thread-safety: one driving thread (`@unchecked Sendable` only so a fixture can hold it).
public final class IdleConnections: @unchecked Sendable {
    private let peer: PeerProcess

    /// Opens `count` connections to 127.0.0.1:`port` from the second process, then, when the
    /// server counts its connections (``EchoServer/acceptedConnections``), waits until it accepted
    /// them all (a connect completes before the server's `accept`).
    ///
    /// Thread-safety: the driving thread.
    public init(port: Int, count: Int, server: any EchoServer) throws {
        let base = server.acceptedConnections ?? 0
        peer = try PeerProcess(executable: PeerProcess.sibling("CrossProcessBenchPeer"),
                               arguments: ["idle-connect", "tcp", "\(port)", "\(count)"])
        do {
            try peer.expect("ready", timeout: .seconds(60))
            let deadline = ProcessCounters.deadline(after: .seconds(60))
            while let accepted = server.acceptedConnections, accepted - base < count {
                guard ProcessCounters.nanoseconds() < deadline else {
                    throw CrossProcessFailure("IdleConnections: the server accepted \(accepted - base) of \(count) in 60 s")
                }
                ProcessCounters.sleep(milliseconds: 1)
            }
        } catch {
            peer.stop()
            throw error
        }
    }

    /// Closes them (ends the second process).
    ///
    /// Thread-safety: the driving thread, once.
    public func close() { peer.stop() }
}
