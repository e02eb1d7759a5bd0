import Foundation
#if canImport(Glibc)
import Glibc
#endif
import PortRunLoopKit

// Helpers for the stream suites that need a peer the library does not drive (AsyncStream*Tests,
// IncomingStreamConnectionsTests, StreamListenerGroupTests): a plain blocking TCP socket on
// loopback, whose calls run on threads of their own (``offThePool(_:)``) so that a blocked read
// never holds one of Swift's few cooperative threads. Every blocking call is bounded by a
// socket timeout, so a test that waits in vain fails instead of hanging.

/// Why a raw socket call failed.
struct RawSocketError: Error, CustomStringConvertible {
    let call: String
    let code: Int32
    var description: String { "\(call) failed: \(String(cString: strerror(code)))" }
}

/// Sets `SO_RCVTIMEO` and `SO_SNDTIMEO` on `fd`: a blocked call gives up after `seconds`.
private func bound(_ fd: Int32, seconds: Int) {
    var timeout = timeval(tv_sec: seconds, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
}

private func loopbackAddress(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return address
}

/// One end of a TCP connection, driven with blocking calls.
///
/// Thread-safety: `@unchecked Sendable`; use from one thread at a time.
final class RawStreamPeer: @unchecked Sendable {
    let fd: Int32
    private var isClosed = false

    init(fd: Int32) {
        self.fd = fd
        bound(fd, seconds: 20)
    }

    /// Connects to 127.0.0.1:`port`; `receiveBufferSize` (set before connecting, so the window
    /// is small from the start) bounds what the kernel takes in for this end.
    static func connect(port: Int, receiveBufferSize: Int32? = nil) throws -> RawStreamPeer {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawSocketError(call: "socket", code: errno) }
        if var size = receiveBufferSize {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = loopbackAddress(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            throw RawSocketError(call: "connect", code: code)
        }
        return RawStreamPeer(fd: fd)
    }

    /// Starts a non-blocking connect to 127.0.0.1:`port` and returns without waiting for it.
    static func connectNonBlocking(port: Int) throws -> RawStreamPeer {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw RawSocketError(call: "socket", code: errno) }
        var address = loopbackAddress(port: port)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return RawStreamPeer(fd: fd)
    }

    /// This end's port (`getsockname`).
    var localPort: Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Sets `SO_SNDBUF`.
    func setSendBufferSize(_ size: Int32) {
        var size = size
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Writes all of `bytes`.
    func write(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if count < 0 {
                if errno == EINTR { continue }
                throw RawSocketError(call: "send", code: errno)
            }
            sent += count
        }
    }

    /// One read of at most `maximum` bytes; empty at end of stream.
    func read(maximum: Int = 65536) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: maximum)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, maximum, 0) }
            if count >= 0 { return Array(buffer[0..<count]) }
            if errno == EINTR { continue }
            throw RawSocketError(call: "recv", code: errno)
        }
    }

    /// Reads exactly `count` bytes (fewer only if the stream ends first).
    func read(exactly count: Int) throws -> [UInt8] {
        var bytes: [UInt8] = []
        while bytes.count < count {
            let chunk = try read(maximum: min(65536, count - bytes.count))
            if chunk.isEmpty { break }
            bytes += chunk
        }
        return bytes
    }

    /// Reads until the end of the stream.
    func readToEnd() throws -> [UInt8] {
        var bytes: [UInt8] = []
        while true {
            let chunk = try read()
            if chunk.isEmpty { return bytes }
            bytes += chunk
        }
    }

    /// Closes with `SO_LINGER` 0: the kernel sends a reset instead of a FIN.
    func reset() {
        var linger = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
        close()
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        Glibc.close(fd)
    }

    deinit { close() }
}

/// A listening TCP socket on 127.0.0.1 whose connections are accepted with a blocking call.
///
/// Thread-safety: `@unchecked Sendable`; `fd` and `port` are immutable.
final class RawStreamListener: @unchecked Sendable {
    let fd: Int32
    let port: Int

    /// Listens with `backlog` (0: the kernel queues one completed connection, then drops SYNs).
    init(backlog: Int32 = 16) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawSocketError(call: "socket", code: errno) }
        bound(fd, seconds: 20)
        var address = loopbackAddress(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard named, listen(fd, backlog) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw RawSocketError(call: "bind/listen", code: code)
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Accepts one connection (bounded by the listening socket's timeout).
    func accept() throws -> RawStreamPeer {
        let connection = Glibc.accept(fd, nil, nil)
        guard connection >= 0 else { throw RawSocketError(call: "accept", code: errno) }
        return RawStreamPeer(fd: connection)
    }

    /// Sets `SO_RCVBUF` for the connections accepted from now on (they inherit it, so their
    /// window is small from the handshake on).
    func setReceiveBufferSize(_ size: Int32) {
        var size = size
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { Glibc.close(fd) }
}

/// The throwing form of `offThePool` (ReliabilitySupport.swift): runs the blocking `body` on a
/// thread of its own and returns its result or throws its error, suspending the task meanwhile.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

/// Looks at `condition` every millisecond until it holds, for at most `seconds` (a bound against
/// hangs: the condition, not the time, is what the test waits for). Returns whether it held.
func eventuallyAsync(seconds: Double = 10, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return try await condition()
}

/// A repeating byte pattern, so that a test can tell bytes out of order or lost.
func patternBytes(_ count: Int, seed: Int = 0) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 31 &+ seed) % 251) }
}
