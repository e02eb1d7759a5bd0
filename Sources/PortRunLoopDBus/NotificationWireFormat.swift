/// The D-Bus form of a distributed notification (<doc:DBusNotifications>, "Wire format").
///
/// A signal from object path ``path``, interface ``interface``, member ``member``, with arguments
/// `ssa{sv}b`: name, object (`""` for none), userInfo, deliverImmediately. Received signals may
/// also be `ss`, `ssa{s<any>}` or `ssa{s<any>}b` (what `dbus-send` and scripts can produce); any
/// other signature is a malformed notification, dropped and counted. ``NotificationSignalWriter``
/// builds the signal, ``NotificationSignalReader`` reads it.
///
/// Thread-safety: a stateless namespace.
enum NotificationWireFormat {
    // Static strings: handed to libdbus as they are (``StaticString/cString``), never copied.
    static let path: StaticString = "/org/portrunloop/Notifications"
    static let interface: StaticString = "org.portrunloop.DistributedNotification"
    static let member: StaticString = "Posted"
    static let signature: StaticString = "ssa{sv}b"
}

/// Why a received `Posted` signal was not a notification.
///
/// Thread-safety: a value type.
package enum MalformedNotification: Error, CustomStringConvertible {
    case signature
    case emptyName
    case userInfo

    package var description: String {
        switch self {
        case .signature: "its signature is not ss, ssa{s*} or ssa{s*}b"
        case .emptyName: "its name is empty"
        case .userInfo: "its userInfo holds a value with no property-list form"
        }
    }
}
