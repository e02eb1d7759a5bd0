import CDBus

/// Which D-Bus signals an observation receives: a D-Bus match rule (`type='signal'` plus the
/// fields set here). Unset fields match anything.
///
/// The bus daemon filters by the rule; the center checks the fields again on arrival, since one
/// connection receives what any of its rules matched. A well-known `sender` name (other than
/// `org.freedesktop.DBus`) is checked by the daemon only, because a signal carries its sender's
/// unique name.
///
/// Thread-safety: a value type; `Sendable`.
public struct BusMatchRule: Sendable, Hashable, CustomStringConvertible {
    /// The sender's bus name (unique `:1.7` or well-known `org.freedesktop.DBus`).
    ///
    /// Thread-safety: a value type.
    public var sender: String?
    /// The object path.
    ///
    /// Thread-safety: a value type.
    public var path: String?
    /// The interface.
    ///
    /// Thread-safety: a value type.
    public var interface: String?
    /// The member (signal name).
    ///
    /// Thread-safety: a value type.
    public var member: String?
    /// The first argument, when it is a string (D-Bus `arg0`).
    ///
    /// Thread-safety: a value type.
    public var arg0: String?

    /// A rule; e.g. `BusMatchRule(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus",
    /// member: "NameOwnerChanged")`.
    ///
    /// Thread-safety: a value type.
    public init(sender: String? = nil, path: String? = nil, interface: String? = nil, member: String? = nil, arg0: String? = nil) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arg0 = arg0
    }

    /// The rule in D-Bus syntax, e.g. `type='signal',interface='org.freedesktop.DBus'`.
    ///
    /// Thread-safety: a value type.
    public var description: String { ruleString }

    package var ruleString: String {
        var parts = ["type='signal'"]
        if let sender { parts.append("sender='\(Self.quote(sender))'") }
        if let path { parts.append("path='\(Self.quote(path))'") }
        if let interface { parts.append("interface='\(Self.quote(interface))'") }
        if let member { parts.append("member='\(Self.quote(member))'") }
        if let arg0 { parts.append("arg0='\(Self.quote(arg0))'") }
        return parts.joined(separator: ",")
    }

    /// Match-rule quoting: a `'` inside a value is written `'\''` (close, escaped quote, reopen).
    /// Every `'` scalar, also one a combining mark follows (which a search by characters, such as
    /// `replacingOccurrences`, does not find: the two make one character).
    static func quote(_ value: String) -> String {
        guard value.utf8.contains(UInt8(ascii: "'")) else { return value }
        var quoted = String.UnicodeScalarView()
        for scalar in value.unicodeScalars {
            if scalar == "'" { quoted.append(contentsOf: "'\\''".unicodeScalars) } else { quoted.append(scalar) }
        }
        return String(quoted)
    }

    /// Throws ``BusNotificationError/invalidMatchRule(_:)`` for a field libdbus's validators refuse,
    /// or one holding a NUL (the rule travels as a C string: it would end there, and the
    /// validators, which read C strings, would check only what comes before it).
    package func validate() throws(BusNotificationError) {
        func check(_ value: String?, _ field: String, _ validator: (UnsafePointer<CChar>?, UnsafeMutablePointer<DBusError>?) -> dbus_bool_t) throws(BusNotificationError) {
            guard let value else { return }
            if value.utf8.contains(0) { throw .invalidMatchRule("\(field) contains NUL") }
            let ok = value.withCString { validator($0, nil) } != 0
            if !ok { throw .invalidMatchRule("\(field) '\(value)' is not a valid D-Bus \(field)") }
        }
        try check(sender, "sender", dbus_validate_bus_name)
        try check(path, "path", dbus_validate_path)
        try check(interface, "interface", dbus_validate_interface)
        try check(member, "member", dbus_validate_member)
        if let arg0, arg0.utf8.contains(0) { throw .invalidMatchRule("arg0 contains NUL") }
    }

    /// Whether `signal` satisfies every field the center can check locally.
    package func matches(_ signal: BusSignal) -> Bool {
        if let sender, sender.hasPrefix(":") || sender == "org.freedesktop.DBus", sender != signal.sender { return false }
        if let path, path != signal.path { return false }
        if let interface, interface != signal.interface { return false }
        if let member, member != signal.member { return false }
        if let arg0 {
            guard case .string(let first)? = signal.arguments.first, first == arg0 else { return false }
        }
        return true
    }
}
