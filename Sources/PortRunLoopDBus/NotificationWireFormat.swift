/// The D-Bus form of a distributed notification (Docs/DistributedNotifications.md, "Wire format").
///
/// A signal from object path ``path``, interface ``interface``, member ``member``, with arguments
/// `ssa{sv}b`: name, object (`""` for none), userInfo, deliverImmediately. Received signals may
/// also be `ss`, `ssa{s<any>}` or `ssa{s<any>}b` (what `dbus-send` and scripts can produce); any
/// other signature is a malformed notification, dropped and counted.
///
/// Thread-safety: a stateless namespace.
enum NotificationWireFormat {
    static let path = "/org/portrunloop/Notifications"
    static let interface = "org.portrunloop.DistributedNotification"
    static let member = "Posted"
    static let signature = "ssa{sv}b"

    /// The arguments of the signal that carries `envelope` (its userInfo already encoded).
    static func arguments(name: String, object: String?, userInfo: BusValue, deliverImmediately: Bool) -> [BusValue] {
        [.string(name), .string(object ?? ""), userInfo, .bool(deliverImmediately)]
    }

    /// The envelope a received signal carries, or why it is not one.
    static func envelope(from arguments: [BusValue]) -> Result<NotificationEnvelope, MalformedNotification> {
        guard arguments.count >= 2, arguments.count <= 4,
              case .string(let name) = arguments[0], case .string(let object) = arguments[1] else {
            return .failure(.signature)
        }
        guard !name.isEmpty else { return .failure(.emptyName) }
        var userInfo: [AnyHashable: Any]?
        if arguments.count >= 3 {
            guard case .dictionary("s", _, let entries) = arguments[2] else { return .failure(.signature) }
            if !entries.isEmpty {
                guard let decoded = PropertyListCoding.decode(userInfo: arguments[2]) else { return .failure(.userInfo) }
                userInfo = decoded
            }
        }
        var immediately = false
        if arguments.count == 4 {
            guard case .bool(let flag) = arguments[3] else { return .failure(.signature) }
            immediately = flag
        }
        return .success(NotificationEnvelope(name: name, object: object.isEmpty ? nil : object,
                                             userInfo: userInfo, deliverImmediately: immediately))
    }
}

/// Why a received `Posted` signal was not a notification.
///
/// Thread-safety: a value type.
enum MalformedNotification: Error, CustomStringConvertible {
    case signature
    case emptyName
    case userInfo

    var description: String {
        switch self {
        case .signature: "its signature is not ss, ssa{s*} or ssa{s*}b"
        case .emptyName: "its name is empty"
        case .userInfo: "its userInfo holds a value with no property-list form"
        }
    }
}
