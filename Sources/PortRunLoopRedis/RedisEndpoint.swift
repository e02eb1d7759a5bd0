import PortRunLoopKit

/// Where a Redis-backed ``PortRunLoopBus/BusNotificationCenter`` connects, and how it behaves
/// while the server is away.
///
/// `BusNotificationCenter(redis: RedisEndpoint(host: "127.0.0.1", port: 6379), loop: loop)`, or,
/// for a master that Redis Sentinel fails over,
/// `RedisEndpoint(sentinels: [("10.0.0.5", 26379), ("10.0.0.6", 26379), ("10.0.0.7", 26379)], masterName: "mymaster")`
/// (``sentinels``; <doc:RedisNotifications>, "Sentinel").
/// TCP, without TLS; a server with a password (`requirepass`) or ACL users is reached with
/// ``password`` and ``username`` (<doc:RedisNotifications>, "Operations"). A value out of range,
/// given to the initialiser or set later, is a precondition failure naming the field.
///
/// Thread-safety: a value type; `Sendable`.
public struct RedisEndpoint: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// The server's host name or IP address (e.g. `127.0.0.1`); not used when ``sentinels`` is
    /// set (the sentinels name the master). A name is resolved by hiredis on
    /// the loop's thread, with a blocking `getaddrinfo`, at every connection attempt (reconnections
    /// included): while the resolver waits the loop serves nothing, and ``connectTimeout`` does not
    /// bound it. A loop that must stay responsive when DNS is slow is given an address.
    ///
    /// Thread-safety: a value type.
    public var host: String { didSet { Self.check(host: host) } }
    /// The server's TCP port; not used when ``sentinels`` is set.
    ///
    /// Thread-safety: a value type.
    public var port: Int { didSet { Self.check(port: port) } }
    /// How long one connection attempt may take (TCP connect) before it counts as failed.
    ///
    /// Thread-safety: a value type.
    public var connectTimeout: Duration { didSet { Self.check(timeout: connectTimeout) } }
    /// How long the server may leave a command (PUBLISH, SUBSCRIBE) unanswered before the
    /// connection counts as lost and is reopened.
    ///
    /// Thread-safety: a value type.
    public var commandTimeout: Duration { didSet { Self.check(timeout: commandTimeout) } }
    /// The delays between reconnection attempts.
    ///
    /// Thread-safety: a value type.
    public var reconnectPolicy: RedisReconnectPolicy
    /// How many posts are kept while the connection is down, sent in order once it is back; later
    /// posts are dropped and counted (``RedisTransportMetrics/droppedWhileDisconnected``).
    ///
    /// Thread-safety: a value type.
    public var disconnectedPostLimit: Int { didSet { Self.check(disconnectedPostLimit: disconnectedPostLimit) } }
    /// How long a connection may stay silent before the server is asked for an answer: a `PING`
    /// on the publishing connection, a `SUBSCRIBE` to the center's own health channel
    /// (`portrunloop.health.<host:pid:random>`, on which nothing is published) on the subscribed
    /// one. An answer that does not come within ``commandTimeout`` makes the connection lost and
    /// reopened, as an unanswered post does. Without it, a subscribe-only center on a dead link
    /// (a server that hangs, a host that vanished without a reset, a middlebox that forgot the
    /// connection) would wait for notifications that never come. The checks also keep a server's
    /// idle-client `timeout` from closing a quiet center. Nil: no checks. Default 15 s.
    ///
    /// Thread-safety: a value type.
    public var healthCheckInterval: Duration? { didSet { Self.check(healthCheckInterval: healthCheckInterval) } }
    /// The password each connection sends first (`AUTH`): the server's `requirepass`, or the
    /// password of ``username``. Nil: no `AUTH` (each connection sends `PING` first instead, so a
    /// server that wants a password fails the connection at once with its `NOAUTH` reason). Never
    /// logged, and not part of ``description``. The server sees it in clear: TCP, no TLS.
    ///
    /// Thread-safety: a value type.
    public var password: String?
    /// The ACL user to authenticate as (`AUTH username password`, Redis 6 and later); nil for the
    /// server's default user. Needs ``password`` (checked by the initialiser and when a center is
    /// made, so that the two may be set in either order).
    ///
    /// Thread-safety: a value type.
    public var username: String?
    /// The form of the payloads this center posts (``RedisPayloadFormat/binary`` unless set;
    /// ``RedisPayloadFormat/json`` for `redis-cli` readers). Received payloads may be either.
    ///
    /// Thread-safety: a value type.
    public var payloadFormat: RedisPayloadFormat = .binary
    /// The Redis Sentinels that name the master, or nil to connect to ``host`` and ``port``. Set,
    /// the center asks them for the master's address at every connection attempt, checks the
    /// answer with `ROLE`, and follows `+switch-master` (<doc:RedisNotifications>, "Sentinel").
    /// ``username`` and ``password`` are the master's; the sentinels' own password is
    /// ``RedisSentinels/password``.
    ///
    /// Thread-safety: a value type.
    public var sentinels: RedisSentinels?
    /// The notification names that travel on Redis Streams and the consumer this center reads
    /// them as, or nil for none (every name over pub/sub): <doc:RedisNotifications>, "Durable
    /// notifications". Set, the center opens a third connection, which reads the streams.
    ///
    /// Thread-safety: a value type.
    public var durable: RedisDurableNotifications?

    /// The default ``disconnectedPostLimit``.
    ///
    /// Thread-safety: a constant.
    public static let defaultDisconnectedPostLimit = 10_000

    /// The default ``healthCheckInterval``.
    ///
    /// Thread-safety: a constant.
    public static let defaultHealthCheckInterval: Duration = .seconds(15)

    /// An endpoint; the defaults suit a server on the same host or network.
    ///
    /// - Parameters:
    ///   - host: not empty.
    ///   - port: 1...65535 (the standard port is 6379).
    ///   - connectTimeout: ``connectTimeout``; positive.
    ///   - commandTimeout: ``commandTimeout``; positive.
    ///   - reconnectPolicy: ``reconnectPolicy``.
    ///   - disconnectedPostLimit: at least 0 (0: nothing is kept while disconnected).
    ///   - healthCheckInterval: positive, or nil for no health checks.
    ///   - username: the ACL user to `AUTH` as (``username``); it needs a password.
    ///   - password: the password to `AUTH` with (``password``).
    ///
    /// Thread-safety: a value type.
    public init(host: String = "127.0.0.1", port: Int = 6379, connectTimeout: Duration = .seconds(2),
                commandTimeout: Duration = .seconds(5), reconnectPolicy: RedisReconnectPolicy = .init(),
                disconnectedPostLimit: Int = RedisEndpoint.defaultDisconnectedPostLimit,
                healthCheckInterval: Duration? = RedisEndpoint.defaultHealthCheckInterval,
                username: String? = nil, password: String? = nil) {
        Self.check(host: host)
        Self.check(port: port)
        Self.check(timeout: connectTimeout)
        Self.check(timeout: commandTimeout)
        Self.check(disconnectedPostLimit: disconnectedPostLimit)
        Self.check(healthCheckInterval: healthCheckInterval)
        Self.check(username: username, password: password)
        self.host = host
        self.port = port
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.reconnectPolicy = reconnectPolicy
        self.disconnectedPostLimit = disconnectedPostLimit
        self.healthCheckInterval = healthCheckInterval
        self.username = username
        self.password = password
    }

    /// An endpoint whose master is named by Redis Sentinels (``sentinels``); the other parameters
    /// are those of ``init(host:port:connectTimeout:commandTimeout:reconnectPolicy:disconnectedPostLimit:healthCheckInterval:username:password:)``.
    /// ``connectTimeout`` and ``commandTimeout`` bound each question to a sentinel as they bound
    /// a connection to the master.
    ///
    /// - Parameters:
    ///   - sentinels: the sentinels' IP addresses and ports, at least one (asked in this order).
    ///   - masterName: the name they monitor the master under; not empty, no whitespace.
    ///   - sentinelPassword: the sentinels' `requirepass`, if they have one.
    ///   - connectTimeout: ``connectTimeout``, for the master and for each sentinel.
    ///   - commandTimeout: ``commandTimeout``, for the master and for each sentinel's answer.
    ///   - reconnectPolicy: ``reconnectPolicy``.
    ///   - disconnectedPostLimit: ``disconnectedPostLimit``.
    ///   - healthCheckInterval: ``healthCheckInterval``.
    ///   - username: the master's ACL user (``username``); it needs a password.
    ///   - password: the master's password (``password``).
    ///
    /// Thread-safety: a value type.
    public init(sentinels: [(host: String, port: Int)], masterName: String, sentinelPassword: String? = nil,
                connectTimeout: Duration = .seconds(2), commandTimeout: Duration = .seconds(5),
                reconnectPolicy: RedisReconnectPolicy = .init(),
                disconnectedPostLimit: Int = RedisEndpoint.defaultDisconnectedPostLimit,
                healthCheckInterval: Duration? = RedisEndpoint.defaultHealthCheckInterval,
                username: String? = nil, password: String? = nil) {
        let set = RedisSentinels(sentinels.map { RedisSentinels.Address(host: $0.host, port: $0.port) },
                                 masterName: masterName, password: sentinelPassword)
        self.init(host: set.addresses[0].host, port: set.addresses[0].port, connectTimeout: connectTimeout,
                  commandTimeout: commandTimeout, reconnectPolicy: reconnectPolicy, disconnectedPostLimit: disconnectedPostLimit,
                  healthCheckInterval: healthCheckInterval, username: username, password: password)
        self.sentinels = set
    }

    private static func check(host: String) { Misuse.check(!host.isEmpty, "RedisEndpoint: host is empty") }

    private static func check(port: Int) { Misuse.check((1...65535).contains(port), "RedisEndpoint: port \(port) is not 1...65535") }

    private static func check(timeout: Duration) { Misuse.check(timeout > .zero, "RedisEndpoint: timeouts must be positive") }

    private static func check(disconnectedPostLimit: Int) {
        Misuse.check(disconnectedPostLimit >= 0, "RedisEndpoint: disconnectedPostLimit must be at least 0")
    }

    private static func check(healthCheckInterval: Duration?) {
        Misuse.check(healthCheckInterval.map { $0 > .zero } ?? true, "RedisEndpoint: healthCheckInterval must be positive (or nil)")
    }

    static func check(username: String?, password: String?) {
        Misuse.check(username == nil || password != nil, "RedisEndpoint: a username needs a password")
    }

    /// `redis://host:port`, or `redis://username@host:port`; with sentinels
    /// `redis-sentinel://[username@]mymaster@127.0.0.1:26379,…`: never a password.
    ///
    /// Thread-safety: a value type.
    public var description: String {
        let user = username.map { $0 + "@" } ?? ""
        if let sentinels { return "redis-sentinel://\(user)\(sentinels)" }
        return "redis://\(user)\(host):\(port)"
    }

    /// The fields as `dump` and debuggers show them, the password masked.
    ///
    /// Thread-safety: a value type.
    public var customMirror: Mirror {
        Mirror(self, children: [
            "host": host, "port": port, "connectTimeout": connectTimeout, "commandTimeout": commandTimeout,
            "reconnectPolicy": reconnectPolicy, "disconnectedPostLimit": disconnectedPostLimit,
            "payloadFormat": payloadFormat, "healthCheckInterval": healthCheckInterval as Any,
            "username": username as Any, "password": password == nil ? "nil" : "(set)",
            "sentinels": sentinels.map { "\($0)" + ($0.password == nil ? "" : " (password set)") } as Any,
            "durable": durable as Any,
        ], displayStyle: .struct)
    }
}

/// The delays between reconnection attempts: ``initialDelay`` after a loss, doubled after each
/// failed attempt up to ``maximumDelay``, back to ``initialDelay`` once a connection has lasted
/// ``healthyAfter`` (a server that accepts and then closes at once does not reset it). Attempts
/// go on until the center is closed.
///
/// Thread-safety: a value type; `Sendable`.
public struct RedisReconnectPolicy: Sendable, Hashable {
    /// The first delay (default 50 ms).
    ///
    /// Thread-safety: a value type.
    public var initialDelay: Duration
    /// The longest delay (default 5 s).
    ///
    /// Thread-safety: a value type.
    public var maximumDelay: Duration

    /// How long a connection must last before its loss starts the delays again from
    /// ``initialDelay``.
    ///
    /// Thread-safety: a constant.
    public static let healthyAfter: Duration = .seconds(1)

    /// A policy; both delays positive, `initialDelay <= maximumDelay`.
    ///
    /// Thread-safety: a value type.
    public init(initialDelay: Duration = .milliseconds(50), maximumDelay: Duration = .seconds(5)) {
        Self.check(initialDelay: initialDelay, maximumDelay: maximumDelay)
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
    }

    /// The two delays' bounds: checked by the initialiser and when a center is made (the fields
    /// may be set later, in either order).
    static func check(initialDelay: Duration, maximumDelay: Duration) {
        Misuse.check(initialDelay > .zero && initialDelay <= maximumDelay, "RedisReconnectPolicy: need 0 < initialDelay <= maximumDelay")
    }

    /// The delay after `delay`: doubled, at most ``maximumDelay``.
    func next(after delay: Duration) -> Duration { min(delay * 2, maximumDelay) }
}
