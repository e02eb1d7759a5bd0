/// A D-Bus signal as an observer of ``PortRunLoopBus/BusNotificationCenter/addSignalObserver(matching:on:using:)``
/// receives it.
///
/// Thread-safety: a value type; `Sendable`.
public struct BusSignal: Sendable, Hashable, CustomStringConvertible {
    /// The sender's unique connection name (e.g. `:1.42`), or `org.freedesktop.DBus` for the bus.
    ///
    /// Thread-safety: a value type.
    public var sender: String
    /// The object path the signal was emitted from.
    ///
    /// Thread-safety: a value type.
    public var path: String
    /// The interface.
    ///
    /// Thread-safety: a value type.
    public var interface: String
    /// The member (the signal's name).
    ///
    /// Thread-safety: a value type.
    public var member: String
    /// The arguments' signature, e.g. `sss`.
    ///
    /// Thread-safety: a value type.
    public var signature: String
    /// The arguments, typed.
    ///
    /// Thread-safety: a value type.
    public var arguments: [BusValue]

    /// A signal value (for tests and for forwarding).
    ///
    /// Thread-safety: a value type.
    public init(sender: String, path: String, interface: String, member: String, signature: String, arguments: [BusValue]) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.signature = signature
        self.arguments = arguments
    }

    /// `interface.member(signature) from sender at path`.
    ///
    /// Thread-safety: a value type.
    public var description: String { "\(interface).\(member)(\(signature)) from \(sender) at \(path)" }
}
