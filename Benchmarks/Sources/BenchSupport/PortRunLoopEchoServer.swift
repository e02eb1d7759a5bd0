#if canImport(Glibc)
import Glibc
#endif
import CBenchNative
import PeerSupport
import PortRunLoopKit

/// Ours: the echo server on one ``RunLoopThread``. Its loop watches the listening socket with
/// `watch(fileDescriptor:for: .read)` and accepts every pending connection; each connection gets a
/// `.read` source whose handler reads once into the server's buffer and writes it back (what did
/// not fit in the socket is kept and written from a `.write` source). End of stream or an error
/// closes the connection.
///
/// Thread-safety: `Sendable`; ``shutDown()`` from the driving thread; everything else runs on the
/// loop thread.
public final class PortRunLoopEchoServer: EchoServer, @unchecked Sendable {
    /// The listening port on 127.0.0.1.
    ///
    /// Thread-safety: immutable.
    public let port: Int
    /// The loop thread's CPU-time clock.
    ///
    /// Thread-safety: immutable.
    public let serverThreadClocks: [clockid_t]
    private let thread: RunLoopThread
    private let listener: Int32
    private var acceptSource: FileDescriptorSource?
    private static let bufferSize = 16 * 1024
    // Loop thread only:
    private let buffer = UnsafeMutableRawPointer.allocate(byteCount: PortRunLoopEchoServer.bufferSize, alignment: 16)
    private var connections: [Int32: Connection] = [:]

    /// One accepted connection (loop thread only).
    private final class Connection: @unchecked Sendable {
        let fd: Int32
        var readSource: FileDescriptorSource?
        var writeSource: FileDescriptorSource?
        var unsent: [UInt8] = []
        init(fd: Int32) { self.fd = fd }
    }

    /// Starts the loop thread, listens on an ephemeral port of 127.0.0.1 and watches the listener.
    ///
    /// Thread-safety: any thread.
    public init() throws {
        var boundPort: Int32 = 0
        listener = cbench_tcp_listen_loopback(4096, &boundPort)
        precondition(listener >= 0, "PortRunLoopEchoServer: listen failed, errno \(errno)")
        port = Int(boundPort)
        thread = try RunLoopThread(name: "bench.echo")
        serverThreadClocks = [try thread.loop.performAndWait { ProcessCounters.currentThreadCPUClock() }]
        try thread.loop.performAndWait { [self] in
            acceptSource = try thread.loop.watch(fileDescriptor: listener, for: .read) { [self] _ in acceptPending() }
        }
    }

    private func acceptPending() {
        while true {
            let fd = cbench_tcp_accept(listener)
            if fd < 0 { return } // EAGAIN: none left (or a transient error: the next readiness retries)
            let connection = Connection(fd: fd)
            do {
                connection.readSource = try thread.loop.watch(fileDescriptor: fd, for: .read) { [self] _ in
                    echo(connection)
                }
                connections[fd] = connection
            } catch {
                _ = Glibc.close(fd)
            }
        }
    }

    private func echo(_ connection: Connection) {
        let received = read(connection.fd, buffer, Self.bufferSize)
        if received > 0 {
            if !connection.unsent.isEmpty { // still flushing: keep the order
                connection.unsent.append(contentsOf: UnsafeRawBufferPointer(start: buffer, count: received))
                return
            }
            let written = write(connection.fd, buffer, received)
            if written == received { return }
            if written < 0 && errno != EAGAIN && errno != EINTR { close(connection); return }
            let sent = max(written, 0)
            connection.unsent.append(contentsOf: UnsafeRawBufferPointer(start: buffer + sent, count: received - sent))
            connection.writeSource = try? thread.loop.watch(fileDescriptor: connection.fd, for: .write) { [self] _ in
                flush(connection)
            }
        } else if received == 0 || (errno != EAGAIN && errno != EINTR) {
            close(connection)
        }
    }

    private func flush(_ connection: Connection) {
        let written = connection.unsent.withUnsafeBytes { write(connection.fd, $0.baseAddress, $0.count) }
        if written < 0 {
            if errno != EAGAIN && errno != EINTR { close(connection) }
            return
        }
        connection.unsent.removeFirst(written)
        if connection.unsent.isEmpty {
            connection.writeSource?.cancel()
            connection.writeSource = nil
        }
    }

    private func close(_ connection: Connection) {
        connection.readSource?.cancel()
        connection.writeSource?.cancel()
        connection.readSource = nil
        connection.writeSource = nil
        connections[connection.fd] = nil
        _ = Glibc.close(connection.fd)
    }

    /// Closes the listener and every connection and ends the loop thread (see ``EchoServer/shutDown()``).
    ///
    /// Thread-safety: the driving thread, once, after the clients closed.
    public func shutDown() {
        try? thread.loop.performAndWait { [self] in
            acceptSource?.cancel()
            acceptSource = nil
            for connection in Array(connections.values) { close(connection) }
            _ = Glibc.close(listener)
        }
        thread.stop()
        buffer.deallocate()
    }
}
