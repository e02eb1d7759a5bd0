/// Which message bus a ``BusNotificationCenter`` connects to.
///
/// Made with ``session``, ``system`` or ``dbus(address:)``. New transports are new static members,
/// so code that names an endpoint keeps compiling when one is added.
///
/// Thread-safety: a value type; `Sendable`.
public struct BusEndpoint: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Sendable, Hashable {
        case session
        case system
        case address(String)
        /// Served by another module's transport (its description).
        case transport(String)
    }

    let kind: Kind

    /// The user's D-Bus session bus (`DBUS_SESSION_BUS_ADDRESS`): the default, and the bus Apple's
    /// distributed notifications correspond to (one user's processes).
    ///
    /// Thread-safety: a constant.
    public static let session = BusEndpoint(kind: .session)

    /// The D-Bus system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else `unix:path=/run/dbus/system_bus_socket`).
    /// Its policy normally forbids sending arbitrary signals: see Docs/DistributedNotifications.md.
    ///
    /// Thread-safety: a constant.
    public static let system = BusEndpoint(kind: .system)

    /// A D-Bus daemon at an explicit address, such as `unix:path=/tmp/bus/socket` (a private
    /// `dbus-daemon`'s `--print-address` output). The connection registers with the daemon
    /// (`Hello`), as a bus client.
    ///
    /// Thread-safety: any thread.
    public static func dbus(address: String) -> BusEndpoint { BusEndpoint(kind: .address(address)) }

    /// An endpoint of a transport another module provides (such as PortRunLoopRedis), named by
    /// `description` in logs; the D-Bus initialiser refuses it.
    ///
    /// Thread-safety: any thread.
    @_spi(Transport)
    public static func transport(_ description: String) -> BusEndpoint { BusEndpoint(kind: .transport(description)) }

    /// `session`, `system` or the address.
    ///
    /// Thread-safety: a value type.
    public var description: String {
        switch kind {
        case .session: "session bus"
        case .system: "system bus"
        case .address(let address): "D-Bus at \(address)"
        case .transport(let description): description
        }
    }
}
