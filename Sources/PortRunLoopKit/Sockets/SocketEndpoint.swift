/// Where a stream socket listens or connects: a host (a name, or a numeric IPv4 or IPv6 address)
/// and a TCP port, or the path of a Unix stream socket.
///
/// A listener's or connection's own addresses (``StreamListener/localEndpoint``,
/// ``StreamConnection/remoteEndpoint``) come back numeric: `.host("127.0.0.1", port: 50123)`,
/// `.host("::1", port: 8080)`, `.unix(path: "/run/app.sock")`.
///
/// Thread-safety: a value type; `Sendable`.
public enum SocketEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// TCP to `host` (a name such as `"localhost"`, or `"127.0.0.1"`, `"::1"`) on `port`
    /// (0...65535; 0 lets a listener take a free port). For a listener, `"0.0.0.0"` or `"::"`
    /// listen on every address of one family, and ``anyHost(port:)`` on every address.
    case host(String, port: Int)
    /// A Unix stream socket at `path` (at most 107 bytes on Linux).
    case unix(path: String)

    /// A listener on every local address (IPv6 and, through it, IPv4) on `port`.
    ///
    /// Thread-safety: a pure function.
    public static func anyHost(port: Int) -> SocketEndpoint { .host("::", port: port) }

    /// `host:port` (brackets around an IPv6 address), or `unix:path`.
    ///
    /// Thread-safety: a pure function.
    public var description: String {
        switch self {
        case .host(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unix(let path): "unix:\(path)"
        }
    }

    /// The port of a TCP endpoint, nil for a Unix one.
    ///
    /// Thread-safety: a pure function.
    public var port: Int? {
        if case .host(_, let port) = self { port } else { nil }
    }

    /// The addresses to try, in order, without asking a name server: a numeric host or a Unix
    /// path resolves here; a name returns nil (``resolveBlocking(passive:)`` does it).
    func resolveNumeric(passive: Bool) throws(StreamConnectionError) -> [System.SocketAddress]? {
        switch self {
        case .unix(let path):
            guard let address = System.unixAddress(path) else { throw .invalidEndpoint(self, reason: "the path is empty or longer than \(System.maximumSocketPathLength) bytes") }
            return [address]
        case .host(let host, let port):
            guard (0...65_535).contains(port) else { throw .invalidEndpoint(self, reason: "the port is outside 0...65535") }
            guard !host.isEmpty else { throw .invalidEndpoint(self, reason: "the host is empty") }
            switch System.resolve(host: host, port: port, passive: passive, numericOnly: true) {
            case .addresses(let found) where !found.isEmpty: return found
            default: return nil
            }
        }
    }

    /// The addresses to try, in order: ``resolveNumeric(passive:)``, else `getaddrinfo` for the
    /// name (which may block on a name server: connections call it off the loop's thread).
    func resolveBlocking(passive: Bool) throws(StreamConnectionError) -> [System.SocketAddress] {
        if let numeric = try resolveNumeric(passive: passive) { return numeric }
        guard case .host(let host, let port) = self else { return [] }
        switch System.resolve(host: host, port: port, passive: passive, numericOnly: false) {
        case .addresses(let found) where !found.isEmpty: return found
        case .addresses: throw .nameResolutionFailed(host, reason: "no address")
        case .failed(let reason): throw .nameResolutionFailed(host, reason: reason)
        }
    }
}
