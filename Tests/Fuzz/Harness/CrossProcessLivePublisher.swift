#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import PortRunLoopKit

/// A port published in the fuzzing process, on a loop thread of its own: `fuzz-cross-process-frame`
/// connects to it as a peer would and sends it records, which `InboundConnection.readFrames`
/// reads (`recv`, `recvmmsg`, the descriptor announcement, credits) as it reads any peer's.
///
/// Thread-safety: `Sendable`; ``exchange(_:)`` is called by one thread at a time (the fuzzer's).
final class CrossProcessLivePublisher: @unchecked Sendable {
    /// The credits each connection starts with (the port's queue limit).
    static let credits = 8
    /// The largest frame the publisher accepts.
    static let maximumFrameSize = 8192

    static let shared = CrossProcessLivePublisher()

    /// The directory the port is published in, removed when the process exits.
    private nonisolated(unsafe) static var directory = ""

    private let thread: RunLoopThread
    private let published: PublishedMessagePort
    private let socketPath: String
    private let ended = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var reasons: [CrossProcessPeer.DisconnectReason] = [] // guarded by `lock`

    private init() {
        var template = Array("/tmp/portrunloop-fuzz-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { fatalError("fuzz: mkdtemp failed: errno \(errno)") }
        let directory = String(cString: made)
        Self.directory = directory
        atexit {
            let directory = CrossProcessLivePublisher.directory
            for file in ["fuzz.sock", "fuzz.lock"] { unlink(directory + "/" + file) }
            rmdir(directory)
        }
        do {
            thread = try RunLoopThread(name: "fuzz-publisher")
            let port = MessagePort(queueLimit: Self.credits)
            port.setHandler { _ in }
            thread.loop.add(port, forMode: .default)
            published = try MessagePortNameRegistry(directory: directory)
                .publish(port, as: "fuzz", on: thread.loop, options: CrossProcessPortOptions(maximumMessageSize: Self.maximumFrameSize))
        } catch {
            fatalError("fuzz: could not publish the port the fuzzer connects to: \(error)")
        }
        socketPath = directory + "/fuzz.sock"
        published.setPeerDisconnectHandler { [weak self] _, reason in
            guard let self else { return }
            lock.withLock { reasons.append(reason) }
            ended.signal()
        }
    }

    /// Connects, sends `records` (as many as the socket takes), ends its side, and returns how
    /// the publisher ended the connection; nil when it did not within `seconds`.
    func exchange(_ records: [[UInt8]], seconds: Int = 5) -> CrossProcessPeer.DisconnectReason? {
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0)
        guard fd >= 0 else { fatalError("fuzz: socket failed: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in socketPath.utf8.enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { fatalError("fuzz: connect to the publisher failed: errno \(errno)") }
        for record in records {
            let sent = record.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
            if sent < 0 { break } // closed by the publisher already, or full
        }
        shutdown(fd, Int32(SHUT_WR))
        guard ended.wait(timeout: .now() + .seconds(seconds)) == .success else { return nil }
        return lock.withLock { reasons.removeFirst() }
    }
}
