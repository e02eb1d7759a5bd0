#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
internal import CLinux

/// The stream-socket calls of connections and listeners (TCP over IPv4 and IPv6, Unix stream
/// sockets), wrapped and checked in one place (the C side is in `CLinux/stream_sockets.h`).
///
/// Thread-safety: each function is as thread-safe as the call it wraps; none keeps state.
extension System {
    /// One socket address (`struct sockaddr_storage` and its length) of any family the library
    /// speaks.
    ///
    /// Thread-safety: a value type.
    struct SocketAddress: @unchecked Sendable {
        fileprivate var raw = portrunloop_socket_address()

        /// `AF_INET`, `AF_INET6` or `AF_UNIX`.
        var family: Int32 { Int32(raw.storage.ss_family) }
        var isUnix: Bool { family == AF_UNIX }

        /// The address as an endpoint: its numeric host and port, or its path.
        var endpoint: SocketEndpoint? {
            var text = [CChar](repeating: 0, count: 128)
            var port: Int32 = 0
            var copy = raw
            guard portrunloop_describe_address(&copy, &text, Int32(text.count), &port) == 0 else { return nil }
            let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return port < 0 ? .unix(path: host) : .host(host, port: Int(port))
        }
    }

    /// What ``resolve(host:port:passive:numericOnly:)`` found.
    enum Resolution {
        case addresses([SocketAddress])
        /// `getaddrinfo` failed: its text (`gai_strerror`).
        case failed(String)
    }

    /// `getaddrinfo` for a stream socket: up to 16 addresses in the resolver's order. With
    /// `numericOnly` it never asks a name server (`AI_NUMERICHOST`), so it never blocks; a name
    /// then fails. `host` nil with `passive`: every local address (a listener's wildcard).
    static func resolve(host: String?, port: Int, passive: Bool, numericOnly: Bool) -> Resolution {
        var raw = [portrunloop_socket_address](repeating: portrunloop_socket_address(), count: 16)
        let count: Int32 = if let host {
            host.withCString { portrunloop_resolve($0, Int32(port), passive ? 1 : 0, numericOnly ? 1 : 0, &raw, 16) }
        } else {
            portrunloop_resolve(nil, Int32(port), passive ? 1 : 0, numericOnly ? 1 : 0, &raw, 16)
        }
        guard count >= 0 else { return .failed(String(cString: portrunloop_resolve_error(count))) }
        return .addresses(raw.prefix(Int(count)).map { SocketAddress(raw: $0) })
    }

    /// The address of a Unix socket at `path`; nil for an empty path or one longer than
    /// ``maximumSocketPathLength``.
    static func unixAddress(_ path: String) -> SocketAddress? {
        var address = SocketAddress()
        guard portrunloop_unix_address(path, &address.raw) == 0 else { return nil }
        return address
    }

    /// A non-blocking, close-on-exec stream socket of `family`.
    static func makeStreamSocket(family: Int32) -> Result<Int32, Errno> {
        let fd = portrunloop_stream_socket(family)
        return fd >= 0 ? .success(fd) : .failure(Errno(errno))
    }

    /// The int-valued socket options a listener or connection sets.
    enum SocketOption: Int32 {
        case reuseAddress = 1, reusePort, noDelay, sendBufferSize, receiveBufferSize, ipv6Only, keepAlive
    }

    /// `setsockopt` of `option` to `value`.
    @discardableResult
    static func setSocketOption(_ fd: Int32, _ option: SocketOption, _ value: Int32) -> Errno? {
        portrunloop_set_socket_option(fd, option.rawValue, value) == 0 ? nil : Errno(errno)
    }

    /// `getsockopt(SO_ERROR)`: 0 when a non-blocking connect succeeded, its errno otherwise.
    static func pendingSocketError(_ fd: Int32) -> Int32 {
        let error = portrunloop_socket_error(fd)
        return error < 0 ? errno : error
    }

    /// `bind` then `listen`.
    static func bindAndListen(_ fd: Int32, address: SocketAddress, backlog: Int32) -> Errno? {
        var raw = address.raw
        guard portrunloop_bind(fd, &raw) == 0 else { return Errno(errno) }
        return listen(fd, backlog) == 0 ? nil : Errno(errno)
    }

    /// What a non-blocking `connect` did.
    enum ConnectStart {
        /// Connected at once (a Unix socket, or loopback TCP on some kernels).
        case connected
        /// `EINPROGRESS`: writability tells the outcome (``pendingSocketError(_:)``).
        case inProgress
        case failed(Errno)
    }

    /// A non-blocking `connect`.
    static func startConnect(_ fd: Int32, to address: SocketAddress) -> ConnectStart {
        var raw = address.raw
        while true {
            if portrunloop_stream_connect(fd, &raw) == 0 { return .connected }
            switch errno {
            case EINTR: continue
            case EINPROGRESS: return .inProgress
            // A Unix socket whose listener's backlog is full: refused, as TCP's would be.
            case EAGAIN: return .failed(Errno(ECONNREFUSED))
            case let code: return .failed(Errno(code))
            }
        }
    }

    /// `getsockname` (`peer` false) or `getpeername` (`peer` true).
    static func socketName(_ fd: Int32, peer: Bool) -> SocketAddress? {
        var address = SocketAddress()
        return portrunloop_socket_name(fd, peer ? 1 : 0, &address.raw) == 0 ? address : nil
    }

    /// What one non-blocking stream read or write did.
    enum StreamIO: Equatable {
        /// This many bytes moved (never 0 for a read: that is ``end``).
        case done(Int)
        /// `EAGAIN`: nothing to read, or no room to write.
        case wouldBlock
        /// A read found the end of the stream: the peer shut its output down.
        case end
        /// `ECONNRESET` or `EPIPE`: the peer reset or closed the connection.
        case reset
        case failed(Int32)
    }

    /// `send(MSG_NOSIGNAL | MSG_DONTWAIT)`: never blocks, never raises SIGPIPE.
    static func streamSend(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> StreamIO {
        while true {
            let rc = portrunloop_stream_send(fd, bytes.baseAddress, UInt(bytes.count))
            if rc >= 0 { return .done(rc) }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case EPIPE, ECONNRESET: return .reset
            case let code: return .failed(code)
            }
        }
    }

    /// `recv(MSG_DONTWAIT)` into `buffer`.
    static func streamReceive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> StreamIO {
        while true {
            let rc = portrunloop_stream_receive(fd, buffer.baseAddress, UInt(buffer.count))
            if rc > 0 { return .done(rc) }
            if rc == 0 { return .end }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case ECONNRESET, EPIPE: return .reset
            case let code: return .failed(code)
            }
        }
    }

    /// `shutdown(SHUT_WR)`.
    static func shutdownOutput(_ fd: Int32) -> Errno? {
        portrunloop_shutdown_output(fd) == 0 ? nil : Errno(errno)
    }

    /// What ``acceptStream(_:)`` found.
    enum Accepted {
        case connection(Int32)
        /// Nothing waiting (`EAGAIN`), or a connection that went away before it was taken
        /// (`ECONNABORTED`, `EINTR`): look again at the next readiness.
        case none
        /// Out of descriptors or kernel memory (`EMFILE`, `ENFILE`, `ENOBUFS`, `ENOMEM`): the
        /// connection stays queued in the backlog until descriptors free.
        case exhausted(Errno)
        case failed(Errno)
    }

    /// `accept4(SOCK_NONBLOCK | SOCK_CLOEXEC)` on a stream listener.
    static func acceptStream(_ fd: Int32) -> Accepted {
        let connection = portrunloop_accept(fd)
        if connection >= 0 { return .connection(connection) }
        switch errno {
        case EAGAIN, EWOULDBLOCK, ECONNABORTED, EINTR, EPROTO: return .none
        case EMFILE, ENFILE, ENOBUFS, ENOMEM: return .exhausted(Errno(errno))
        case let code: return .failed(Errno(code))
        }
    }
}

extension System {
    /// `socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC)`: two connected stream
    /// sockets (a bound stream pair's two ends).
    static func makeStreamSocketPair() -> Result<(Int32, Int32), Errno> {
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { return .failure(Errno(errno)) }
        return .success((fds[0], fds[1]))
    }
}
