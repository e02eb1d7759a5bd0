import Foundation

/// One process's side of the bus-notification scenarios: posts bursts, receives them, makes round
/// trips or answers them, over one transport (D-Bus or Redis) and one implementation (ours:
/// `BusNotificationCenter`; raw: C on the same library). Every notification has the same name
/// scheme and userInfo, `["from": "bench-peer", "seq": n]`, on every side.
///
/// Thread-safety: one driving thread (`@unchecked Sendable` only so a fixture can hold it).
public protocol BusNotificationSide: AnyObject, Sendable {
    /// Posts `count` notifications named ``BusNotificationNames/burst`` (seq 0…count-1) from the
    /// calling thread; returns once the library has them (ours) or has written them (raw).
    ///
    /// Thread-safety: the driving thread.
    func postBurst(_ count: Int) throws
    /// Waits until `total` observed notifications have been handled since the side was made.
    ///
    /// Thread-safety: the driving thread.
    func waitForReceived(_ total: Int) throws
    /// `count` round trips (post a ping, wait for the answer with its seq); latencies in ns.
    ///
    /// Thread-safety: the driving thread.
    func roundTrips(_ count: Int, latencies: UnsafeMutablePointer<Int64>) throws
    /// Answers every observed ping with a pong carrying its seq, until the connection ends.
    ///
    /// Thread-safety: the driving thread (blocks it).
    func serveAnswers() throws
    /// Disconnects.
    ///
    /// Thread-safety: the driving thread, once.
    func close()
}

/// The notification names of the bus-notification scenarios.
///
/// Thread-safety: constants.
public enum BusNotificationNames {
    /// What a burst posts (the benchmark observes it).
    ///
    /// Thread-safety: a constant.
    public static let burst = "org.portrunloop.bench.note"
    /// The benchmark's round-trip post (the peer observes it).
    ///
    /// Thread-safety: a constant.
    public static let ping = "org.portrunloop.bench.ping"
    /// The peer's answer (the benchmark observes it).
    ///
    /// Thread-safety: a constant.
    public static let pong = "org.portrunloop.bench.pong"
}

/// Which side of the exchange a ``BusNotificationSide`` is, hence what it observes.
///
/// Thread-safety: `Sendable` value.
public enum BusNotificationRole: String, Sendable {
    /// Posts bursts; observes nothing (peer process).
    case sender
    /// Observes bursts (benchmark process).
    case receiver
    /// Posts pings, observes pongs (benchmark process).
    case pinger
    /// Observes pings, answers with pongs (peer process).
    case answerer

    /// The name this role observes, if any.
    ///
    /// Thread-safety: any thread.
    public var observed: String? {
        switch self {
        case .sender: nil
        case .receiver: BusNotificationNames.burst
        case .pinger: BusNotificationNames.pong
        case .answerer: BusNotificationNames.ping
        }
    }
}

/// A transport and implementation of the bus-notification scenarios, e.g. `dbus.ours`.
///
/// Thread-safety: `Sendable` value.
public struct BusNotificationPeer: Sendable, Hashable {
    /// `DBus` or `Redis` (the row name).
    ///
    /// Thread-safety: immutable.
    public let transport: String
    /// `Ours` or `Raw` (the row name).
    ///
    /// Thread-safety: immutable.
    public let implementation: String
    /// Notifications per `BusNotification.Throughput` sample (package-benchmark drops samples
    /// longer than ~2 s from its JMH export).
    ///
    /// Thread-safety: immutable.
    public let burst: Int
    /// Whether its notifications carry the object "bench-peer" and no userInfo instead of the
    /// two-entry userInfo: the library's path without the cost of a `[AnyHashable: Any]` on
    /// either side. Bursts only (no seq travels, so no round trips).
    ///
    /// Thread-safety: immutable.
    public let bare: Bool
    /// Whether ours posts and observes the same two entries as typed `BusFields`
    /// (`post(name:object:fields:)`, `addFieldsObserver`) instead of a `[AnyHashable: Any]`: the
    /// same notifications on the wire, without the dictionary on either side.
    ///
    /// Thread-safety: immutable.
    public let fields: Bool
    /// Whether the notifications are durable (Redis only): posted with `XADD` to the name's stream
    /// and read through a consumer group (`XREADGROUP`, `XACK`), as `RedisEndpoint.durable` makes
    /// a center do, instead of `PUBLISH` and `SUBSCRIBE`.
    ///
    /// Thread-safety: immutable.
    public let durable: Bool

    /// The argument `CrossProcessBenchPeer` takes for it, e.g. `dbus.ours`, `dbus.ours.fields`,
    /// `redis.raw.bare` or `redis.ours.fields.durable`.
    ///
    /// Thread-safety: any thread.
    public var argument: String {
        "\(transport.lowercased()).\(implementation.lowercased())" + (bare ? ".bare" : "") + (fields ? ".fields" : "")
            + (durable ? ".durable" : "")
    }

    /// The benchmark name's last part: `Ours`, `Raw`, `Ours.Fields`, `Ours.Bare`, `Raw.Bare`,
    /// `Raw.Durable`, `Ours.Fields.Durable`.
    ///
    /// Thread-safety: any thread.
    public var rowName: String { implementation + (bare ? ".Bare" : "") + (fields ? ".Fields" : "") + (durable ? ".Durable" : "") }

    /// Thread-safety: any thread.
    public init(transport: String, implementation: String, burst: Int, bare: Bool = false, fields: Bool = false, durable: Bool = false) {
        (self.transport, self.implementation, self.burst, self.bare, self.fields) = (transport, implementation, burst, bare, fields)
        self.durable = durable
    }

    /// The peer named by a `CrossProcessBenchPeer` argument, or nil.
    ///
    /// Thread-safety: any thread.
    public static func named(_ argument: String) -> BusNotificationPeer? {
        all.first { $0.argument == argument }
    }

    /// Every transport × implementation, raw first.
    ///
    /// Thread-safety: a constant.
    public static let all: [BusNotificationPeer] = [
        BusNotificationPeer(transport: "DBus", implementation: "Raw", burst: 10_000),
        BusNotificationPeer(transport: "DBus", implementation: "Ours", burst: 10_000),
        BusNotificationPeer(transport: "DBus", implementation: "Ours", burst: 10_000, fields: true),
        BusNotificationPeer(transport: "Redis", implementation: "Raw", burst: 10_000),
        BusNotificationPeer(transport: "Redis", implementation: "Ours", burst: 10_000),
        BusNotificationPeer(transport: "Redis", implementation: "Ours", burst: 10_000, fields: true),
        BusNotificationPeer(transport: "Redis", implementation: "Raw", burst: 10_000, bare: true),
        BusNotificationPeer(transport: "Redis", implementation: "Ours", burst: 10_000, bare: true),
        BusNotificationPeer(transport: "Redis", implementation: "Raw", burst: 10_000, durable: true),
        BusNotificationPeer(transport: "Redis", implementation: "Ours", burst: 10_000, durable: true),
        BusNotificationPeer(transport: "Redis", implementation: "Ours", burst: 10_000, fields: true, durable: true),
    ]

    /// Connects a side to `address` (a bus address, or a Redis port on 127.0.0.1).
    ///
    /// Thread-safety: any thread.
    public func connect(_ address: String, role: BusNotificationRole) throws -> any BusNotificationSide {
        if bare || durable, transport != "Redis" { throw CrossProcessFailure("bare and durable peers are Redis only") }
        return switch (transport, implementation) {
        case ("DBus", "Raw"): try RawDBusNotificationSide(address: address, role: role)
        case ("Redis", "Raw"): try RawRedisNotificationSide(port: Self.port(address), role: role, bare: bare, durable: durable)
        case ("DBus", _): try OursBusNotificationSide(dbus: address, role: role, fields: fields)
        default: try OursBusNotificationSide(redisPort: Self.port(address), role: role, bare: bare, fields: fields, durable: durable)
        }
    }

    private static func port(_ address: String) throws -> Int {
        guard let port = Int(address) else { throw CrossProcessFailure("'\(address)' is not a Redis port") }
        return port
    }
}
