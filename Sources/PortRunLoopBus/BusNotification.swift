import Foundation

/// A distributed notification with its userInfo as typed ``BusFields``: what an observation made
/// with ``BusNotificationCenter/addFieldsObserver(forName:object:suspensionBehavior:on:using:)``
/// receives.
///
/// Thread-safety: a value type; `Sendable`.
public struct BusNotification: Sendable, Equatable, CustomStringConvertible {
    /// The notification's name.
    ///
    /// Thread-safety: a value type.
    public var name: Notification.Name
    /// The object string, or nil (on the D-Bus wire nil is the empty string, so `""` arrives as nil).
    ///
    /// Thread-safety: a value type.
    public var object: String?
    /// The userInfo (empty when the poster sent none).
    ///
    /// Thread-safety: a value type.
    public var fields: BusFields
    /// The poster's `deliverImmediately`.
    ///
    /// Thread-safety: a value type.
    public var deliverImmediately: Bool

    /// A notification value (for tests and for forwarding).
    ///
    /// Thread-safety: a value type.
    public init(name: Notification.Name, object: String? = nil, fields: BusFields = [:], deliverImmediately: Bool = false) {
        self.name = name
        self.object = object
        self.fields = fields
        self.deliverImmediately = deliverImmediately
    }

    /// The same notification as Foundation's type, its userInfo the fields' ``BusFields/propertyList``
    /// (nil when there are no fields).
    ///
    /// Thread-safety: a value type.
    public var notification: Notification {
        Notification(name: name, object: object, userInfo: fields.isEmpty ? nil : fields.propertyList)
    }

    /// `name (object) fields`.
    ///
    /// Thread-safety: a value type.
    public var description: String {
        "\(name.rawValue)" + (object.map { " (\($0))" } ?? "") + (fields.isEmpty ? "" : " \(fields)")
    }
}
