/// One transport of the cross-process scenarios: the `CrossProcessBenchPeer` argument that serves it,
/// and how to connect a client to the address the fixture made for it.
///
/// Thread-safety: `Sendable` value.
public struct CrossProcessTransport: Sendable {
    /// The row name (`Raw`, `NIO`, `DBus`, `Ours`).
    ///
    /// Thread-safety: immutable.
    public let name: String
    /// The transport argument of `CrossProcessBenchPeer serve|send`.
    ///
    /// Thread-safety: immutable.
    public let peerArgument: String
    /// Messages per `CrossProcess.Throughput*` sample (all senders together): fewer for a transport
    /// that takes seconds per 100,000 (package-benchmark drops samples longer than ~2 s from its
    /// JMH export). Results are per message either way.
    ///
    /// Thread-safety: immutable.
    public let burst: Int
    /// Messages per `CrossProcess.Throughput*` sample (all senders together), unless the transport
    /// says fewer.
    ///
    /// Thread-safety: a constant.
    public static let defaultBurst = 100_000
    /// Connects a client in this process to `address`.
    ///
    /// Thread-safety: immutable.
    public let connect: @Sendable (_ address: String) throws -> any CrossProcessClient

    /// Thread-safety: any thread.
    public init(name: String, peerArgument: String, burst: Int = CrossProcessTransport.defaultBurst, connect: @escaping @Sendable (_ address: String) throws -> any CrossProcessClient) {
        self.name = name
        self.peerArgument = peerArgument
        self.burst = burst
        self.connect = connect
    }

    /// The raw `SOCK_SEQPACKET` floor.
    ///
    /// Thread-safety: a constant.
    public static let raw = CrossProcessTransport(name: "Raw", peerArgument: "raw") { try SeqpacketClient(path: $0) }
    /// The D-Bus floor: method calls through a private dbus-daemon, libdbus-1 on both sides.
    ///
    /// Thread-safety: a constant.
    public static let dbus = CrossProcessTransport(name: "DBus", peerArgument: "dbus", burst: 20_000) { try DBusClient(address: $0) }
}
