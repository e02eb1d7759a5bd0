extension BusEndpoint {
    /// The user's D-Bus session bus (`DBUS_SESSION_BUS_ADDRESS`): the default, and the bus Apple's
    /// distributed notifications correspond to (one user's processes).
    ///
    /// Thread-safety: a constant.
    public static let session = BusEndpoint(DBusAddress.session)

    /// The D-Bus system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else `unix:path=/run/dbus/system_bus_socket`).
    /// Its policy decides who may post and observe notifications there: see <doc:DBusNotifications>,
    /// "Operations notes".
    ///
    /// Thread-safety: a constant.
    public static let system = BusEndpoint(DBusAddress.system)

    /// A D-Bus daemon at an explicit address, such as `unix:path=/tmp/bus/socket` (a private
    /// `dbus-daemon`'s `--print-address` output). The connection registers with the daemon
    /// (`Hello`), as a bus client.
    ///
    /// Thread-safety: any thread.
    public static func dbus(address: String) -> BusEndpoint { BusEndpoint(DBusAddress.address(address)) }
}

/// A D-Bus endpoint: which bus ``DBusCall/connect(to:)`` opens.
///
/// Thread-safety: a value type.
enum DBusAddress: BusEndpointAddress {
    case session
    case system
    case address(String)

    /// `session bus`, `system bus` or `D-Bus at <address>`.
    var description: String {
        switch self {
        case .session: "session bus"
        case .system: "system bus"
        case .address(let address): "D-Bus at \(address)"
        }
    }
}
