import Foundation

/// A distributed notification as the center hands it to a transport and gets it back: name,
/// object, userInfo and the poster's `deliverImmediately`.
///
/// Thread-safety: `@unchecked Sendable`: immutable after creation; its userInfo holds only the
/// property-list values ``PropertyListCoding`` decodes (strings, numbers, `Data`, arrays and
/// dictionaries of them), which are safe to read from any thread.
@_spi(Transport)
public struct NotificationEnvelope: @unchecked Sendable {
    /// The notification's name (not empty).
    ///
    /// Thread-safety: immutable.
    public let name: String
    /// The object string, or nil (on the D-Bus wire nil is the empty string).
    ///
    /// Thread-safety: immutable.
    public let object: String?
    /// The userInfo property list, or nil.
    ///
    /// Thread-safety: immutable (property-list values only).
    public let userInfo: [AnyHashable: Any]?
    /// The poster's `deliverImmediately`.
    ///
    /// Thread-safety: immutable.
    public let deliverImmediately: Bool

    /// An envelope (`userInfo` holding only property-list values, as ``PropertyListCoding`` decodes).
    ///
    /// Thread-safety: a value type.
    public init(name: String, object: String?, userInfo: [AnyHashable: Any]?, deliverImmediately: Bool) {
        self.name = name
        self.object = object
        self.userInfo = userInfo
        self.deliverImmediately = deliverImmediately
    }

    /// The Foundation notification observers receive (`object` is the string, or nil).
    var notification: Notification {
        Notification(name: Notification.Name(name), object: object, userInfo: userInfo)
    }

    /// Whether an observation for `name`/`object` (nil: any) wants it.
    func matches(name wanted: String?, object wantedObject: String?) -> Bool {
        if let wanted, wanted != name { return false }
        if let wantedObject, wantedObject != object { return false }
        return true
    }

    /// The key `.coalesce` keeps one notification per.
    var coalescingKey: String { name + "\u{0}" + (object ?? "") }
}
