import CDBus

extension DBusTransport {
    /// One message from the connection's filter (loop thread): the local `Disconnected` signal
    /// ends the connection; a `Posted` signal at the notification path is read straight into a
    /// notification (or a counted, logged drop); a signal becomes a ``BusSignal`` for the center's
    /// signal observers only while it has some.
    func received(_ message: OpaquePointer) {
        guard dbus_message_get_type(message) == DBUS_MESSAGE_TYPE_SIGNAL else { return }
        if dbus_message_is_signal(message, Self.localInterface.cString, Self.disconnected.cString) != 0 {
            connectionLost()
            return
        }
        guard let delegate else { return }
        if dbus_message_is_signal(message, NotificationWireFormat.interface.cString, NotificationWireFormat.member.cString) != 0,
           dbus_message_has_path(message, NotificationWireFormat.path.cString) != 0 {
            switch NotificationSignalReader.envelope(from: message) {
            case .success(let envelope):
                delegate.transportReceived(envelope)
            case .failure(let reason):
                let signature = Self.string(dbus_message_get_signature(message))
                delegate.transportDroppedMalformed(from: Self.string(dbus_message_get_sender(message)),
                                                   reason: "\(reason) (signature \(signature))")
            }
        }
        guard delegate.observesSignals else { return }
        delegate.transportReceived(signal: BusSignal(
            sender: Self.string(dbus_message_get_sender(message)), path: Self.string(dbus_message_get_path(message)),
            interface: Self.string(dbus_message_get_interface(message)), member: Self.string(dbus_message_get_member(message)),
            signature: Self.string(dbus_message_get_signature(message)), arguments: DBusMessageReader.arguments(of: message)))
    }

    /// The signal libdbus queues when the connection drops.
    private static let localInterface: StaticString = "org.freedesktop.DBus.Local"
    private static let disconnected: StaticString = "Disconnected"

    private static func string(_ pointer: UnsafePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }
}
