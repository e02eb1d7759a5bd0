import CBenchNative

/// The D-Bus floor's side: C on libdbus-1 (`cbench_bus_dbus.h`), the same signal as ours.
///
/// Thread-safety: one driving thread (the C connection is used by one thread).
final class RawDBusNotificationSide: BusNotificationSide, @unchecked Sendable {
    private let bus: UnsafeMutableRawPointer

    init(address: String, role: BusNotificationRole) throws {
        guard let bus = cbench_bus_dbus_open(address, role.observed) else {
            throw CrossProcessFailure("raw D-Bus: cannot connect to \(address) or add the match rule")
        }
        self.bus = bus
    }

    func postBurst(_ count: Int) throws {
        guard cbench_bus_dbus_post_burst(bus, BusNotificationNames.burst, Int32(count)) == 0 else {
            throw CrossProcessFailure("raw D-Bus: a burst failed")
        }
    }

    func waitForReceived(_ total: Int) throws {
        guard cbench_bus_dbus_receive(bus, Int64(total), 30_000) == 0 else {
            throw CrossProcessFailure("raw D-Bus: \(total) notifications not received within 30 s")
        }
    }

    func roundTrips(_ count: Int, latencies: UnsafeMutablePointer<Int64>) throws {
        guard cbench_bus_dbus_round_trips(bus, BusNotificationNames.ping, Int32(count), latencies) == 0 else {
            throw CrossProcessFailure("raw D-Bus: round trips failed")
        }
    }

    func serveAnswers() throws { _ = cbench_bus_dbus_echo(bus, BusNotificationNames.pong) }

    func close() { cbench_bus_dbus_close(bus) }
}

/// The Redis floor's side: C on hiredis' synchronous API (`cbench_bus_redis.h`), the same channel
/// and payload as ours.
///
/// Thread-safety: one driving thread (the C contexts are used by one thread).
final class RawRedisNotificationSide: BusNotificationSide, @unchecked Sendable {
    private let client: UnsafeMutableRawPointer

    init(port: Int, role: BusNotificationRole, bare: Bool, durable: Bool = false) throws {
        guard let client = cbench_bus_redis_open(Int32(port), role.observed, bare ? 1 : 0, durable ? 1 : 0) else {
            throw CrossProcessFailure("raw Redis: cannot connect to 127.0.0.1:\(port) or subscribe")
        }
        self.client = client
    }

    func postBurst(_ count: Int) throws {
        guard cbench_bus_redis_post_burst(client, BusNotificationNames.burst, Int32(count)) == 0 else {
            throw CrossProcessFailure("raw Redis: a burst failed")
        }
    }

    func waitForReceived(_ total: Int) throws {
        guard cbench_bus_redis_receive(client, Int64(total)) == 0 else {
            throw CrossProcessFailure("raw Redis: \(total) notifications not received (5 s silence)")
        }
    }

    func roundTrips(_ count: Int, latencies: UnsafeMutablePointer<Int64>) throws {
        guard cbench_bus_redis_round_trips(client, BusNotificationNames.ping, Int32(count), latencies) == 0 else {
            throw CrossProcessFailure("raw Redis: round trips failed")
        }
    }

    func serveAnswers() throws { _ = cbench_bus_redis_echo(client, BusNotificationNames.pong) }

    func close() { cbench_bus_redis_close(client) }
}
