import CBenchNative

/// The D-Bus floor's client: a private libdbus-1 connection calling the peer's methods
/// (`cbench_dbus.h`).
///
/// Thread-safety: one driving thread (see ``CrossProcessClient``).
public final class DBusClient: CrossProcessClient, @unchecked Sendable {
    private let connection: UnsafeMutableRawPointer

    /// Connects to the bus at `address` (the peer owns org.portrunloop.BenchPeer there).
    ///
    /// Thread-safety: any thread.
    public init(address: String) throws {
        guard let connection = cbench_dbus_connect(address) else {
            throw CrossProcessFailure("D-Bus connect \(address) failed")
        }
        self.connection = connection
    }

    /// Thread-safety: the driving thread.
    public func roundTrips(_ count: Int, size: Int, latencies: UnsafeMutablePointer<Int64>?) throws {
        guard cbench_dbus_round_trips(connection, Int32(count), Int32(size), latencies) == 0 else {
            throw CrossProcessFailure("D-Bus Echo calls failed")
        }
    }

    /// Thread-safety: the driving thread.
    public func burst(_ count: Int, size: Int) throws {
        guard cbench_dbus_burst(connection, Int32(count), Int32(size)) == 0 else {
            throw CrossProcessFailure("D-Bus Sink/Flush calls failed")
        }
    }

    /// Thread-safety: the driving thread, once.
    public func close() { cbench_dbus_close(connection) }
}
