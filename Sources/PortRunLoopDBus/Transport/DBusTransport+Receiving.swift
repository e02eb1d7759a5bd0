import CDBus

extension DBusTransport {
    /// One message from the connection's filter (loop thread): the local `Disconnected` signal
    /// ends the connection; a `Posted` signal at the notification path becomes a notification (or
    /// a counted, logged drop); every signal also goes to the center's signal observers.
    func received(_ message: OpaquePointer) {
        guard dbus_message_get_type(message) == DBUS_MESSAGE_TYPE_SIGNAL else { return }
        func string(_ pointer: UnsafePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }
        let interface = string(dbus_message_get_interface(message))
        let member = string(dbus_message_get_member(message))
        let path = string(dbus_message_get_path(message))
        if interface == "org.freedesktop.DBus.Local", member == "Disconnected" {
            connectionLost()
            return
        }
        guard let delegate else { return }
        let signal = BusSignal(sender: string(dbus_message_get_sender(message)), path: path, interface: interface,
                               member: member, signature: string(dbus_message_get_signature(message)),
                               arguments: DBusMessageReader.arguments(of: message))
        if interface == NotificationWireFormat.interface, member == NotificationWireFormat.member,
           path == NotificationWireFormat.path {
            switch NotificationWireFormat.envelope(from: signal.arguments) {
            case .success(let envelope): delegate.transportReceived(envelope)
            case .failure(let reason): delegate.transportDroppedMalformed(from: signal.sender, reason: "\(reason) (signature \(signal.signature))")
            }
        }
        delegate.transportReceived(signal)
    }
}
