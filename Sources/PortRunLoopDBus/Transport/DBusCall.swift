import CDBus

/// libdbus's `DBusError`, as a Swift value, and the bus calls the transport makes.
///
/// Thread-safety: a stateless namespace.
enum DBusCall {
    /// Makes libdbus thread-aware, once per process (before the first connection): the transport
    /// opens its connection on the caller's thread and then uses it on its loop's thread.
    static let threadsInitialized: Bool = dbus_threads_init_default() != 0

    /// Runs `body` with an initialised `DBusError`; returns its result, or the error's name and
    /// message when `body` set it.
    static func withError<T>(_ body: (UnsafeMutablePointer<DBusError>) -> T) -> (T, (name: String, message: String)?) {
        var error = DBusError()
        dbus_error_init(&error)
        let result = body(&error)
        guard dbus_error_is_set(&error) != 0 else { return (result, nil) }
        let name = error.name.map { String(cString: $0) } ?? "unknown"
        let message = error.message.map { String(cString: $0) } ?? ""
        dbus_error_free(&error)
        return (result, (name, message))
    }

    /// The typed error a failed bus call stands for.
    static func error(name: String, message: String) -> BusNotificationError {
        switch name {
        case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout": .timedOut
        case "org.freedesktop.DBus.Error.Disconnected": .disconnected
        case "org.freedesktop.DBus.Error.NoMemory": .outOfMemory
        default: .busError(name: name, message: message)
        }
    }

    /// Opens a private connection to `endpoint` and registers it with the bus (`Hello`). Blocks
    /// the calling thread for the connection and one round trip; libdbus bounds the registration
    /// by its own default reply timeout (25 s), not by the center's `callTimeout`.
    static func connect(to endpoint: BusEndpoint) throws(BusNotificationError) -> OpaquePointer {
        _ = threadsInitialized
        guard let address = endpoint.address as? DBusAddress else {
            throw .connectionFailed("\(endpoint) is not a D-Bus endpoint")
        }
        let (opened, failure): (OpaquePointer?, (name: String, message: String)?) = withError { error in
            switch address {
            case .session: return dbus_bus_get_private(DBUS_BUS_SESSION, error)
            case .system: return dbus_bus_get_private(DBUS_BUS_SYSTEM, error)
            case .address(let address):
                guard let connection = address.withCString({ dbus_connection_open_private($0, error) }) else { return nil }
                guard dbus_bus_register(connection, error) != 0 else {
                    dbus_connection_close(connection)
                    dbus_connection_unref(connection)
                    return nil
                }
                return connection
            }
        }
        guard let connection = opened else {
            throw .connectionFailed(failure.map { "\($0.name): \($0.message)" } ?? "no connection")
        }
        // The default for bus connections is to exit the process when the bus goes away; a library
        // reports it instead.
        dbus_connection_set_exit_on_disconnect(connection, 0)
        return connection
    }

    /// Calls `member` on the bus daemon (`org.freedesktop.DBus`) with string arguments and waits
    /// for the reply, at most `timeoutMilliseconds`.
    static func callBus(_ connection: OpaquePointer, member: String, arguments: [String],
                        timeoutMilliseconds: Int32) throws(BusNotificationError) {
        guard let message = dbus_message_new_method_call("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                         "org.freedesktop.DBus", member) else { throw .outOfMemory }
        defer { dbus_message_unref(message) }
        guard DBusMessageWriter.append(arguments.map { .string($0) }, to: message) else { throw .outOfMemory }
        let (reply, failure) = withError { error in
            dbus_connection_send_with_reply_and_block(connection, message, timeoutMilliseconds, error)
        }
        if let reply { dbus_message_unref(reply) }
        if let failure { throw error(name: failure.name, message: failure.message) }
    }
}
