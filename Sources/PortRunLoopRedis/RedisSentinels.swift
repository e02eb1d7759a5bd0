import Foundation
import PortRunLoopKit

/// The Redis Sentinels a center asks for its master (``RedisEndpoint/sentinels``): their
/// addresses, the name they monitor the master under, and the password they want.
///
/// The center asks each sentinel in turn for the master's address (`SENTINEL
/// get-master-addr-by-name`), checks the answer with `ROLE`, stays subscribed on one sentinel to
/// `+switch-master`, and asks again whenever the master is lost (<doc:RedisNotifications>,
/// "Sentinel"). Sentinels are given by **IP address**, and an answer that names a host is refused:
/// a name would be resolved with a blocking `getaddrinfo` on the loop's thread (run the sentinels
/// with `sentinel resolve-hostnames no`, the default). A value out of range, given to the
/// initialiser or set later, is a precondition failure naming the field.
///
/// Thread-safety: a value type; `Sendable`.
public struct RedisSentinels: Sendable, Hashable, CustomStringConvertible {
    /// One sentinel's (or an answered master's) IP address and TCP port.
    ///
    /// Thread-safety: a value type; `Sendable`.
    public struct Address: Sendable, Hashable, CustomStringConvertible {
        /// An IPv4 or IPv6 address (`127.0.0.1`, `::1`), not a host name.
        ///
        /// Thread-safety: a value type.
        public let host: String
        /// The TCP port (a sentinel's standard port is 26379).
        ///
        /// Thread-safety: a value type.
        public let port: Int

        /// An address; `host` must be an IP address and `port` 1...65535.
        ///
        /// Thread-safety: a value type.
        public init(host: String, port: Int) {
            Misuse.check(Self.isIPAddress(host), "RedisSentinels: \(host.debugDescription) is not an IP address (a name would be resolved with a blocking getaddrinfo on the loop's thread)")
            Misuse.check((1...65535).contains(port), "RedisSentinels: port \(port) is not 1...65535")
            self.host = host
            self.port = port
        }

        /// The address a sentinel answered, or nil when it is not one (a host name, a port out
        /// of range, or not a number).
        init?(answer host: String, port: String) {
            guard Self.isIPAddress(host), let number = Int(port), (1...65535).contains(number) else { return nil }
            self.host = host
            self.port = number
        }

        /// `host:port` (`[host]:port` for IPv6).
        ///
        /// Thread-safety: a value type.
        public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

        /// Whether `text` is an IPv4 or IPv6 address in numeric form.
        static func isIPAddress(_ text: String) -> Bool {
            var v4 = in_addr()
            var v6 = in6_addr()
            return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
        }
    }

    /// The sentinels, asked in this order (not empty). After a failed attempt the next one is
    /// asked first.
    ///
    /// Thread-safety: a value type.
    public var addresses: [Address] { didSet { Self.check(addresses: addresses) } }
    /// The name the sentinels monitor the master under (`sentinel monitor <name> …`): not empty,
    /// no whitespace.
    ///
    /// Thread-safety: a value type.
    public var masterName: String { didSet { Self.check(masterName: masterName) } }
    /// The password each connection to a sentinel sends first (`AUTH`: the sentinels'
    /// `requirepass`); nil for none (`PING` instead). The master's own password is the endpoint's
    /// ``RedisEndpoint/password``. Never logged, and not part of ``description``.
    ///
    /// Thread-safety: a value type.
    public var password: String?

    /// Sentinels for `masterName`.
    ///
    /// - Parameters:
    ///   - addresses: at least one.
    ///   - masterName: not empty, no whitespace.
    ///   - password: the sentinels' password, if they want one.
    ///
    /// Thread-safety: a value type.
    public init(_ addresses: [Address], masterName: String, password: String? = nil) {
        Self.check(addresses: addresses)
        Self.check(masterName: masterName)
        self.addresses = addresses
        self.masterName = masterName
        self.password = password
    }

    private static func check(addresses: [Address]) {
        Misuse.check(!addresses.isEmpty, "RedisSentinels: no sentinel address")
    }

    private static func check(masterName: String) {
        Misuse.check(!masterName.isEmpty && !masterName.contains(where: \.isWhitespace),
                     "RedisSentinels: masterName \(masterName.debugDescription) is empty or holds whitespace")
    }

    /// `mymaster@127.0.0.1:26379,127.0.0.1:26380`: never the password.
    ///
    /// Thread-safety: a value type.
    public var description: String { "\(masterName)@" + addresses.map(\.description).joined(separator: ",") }
}
