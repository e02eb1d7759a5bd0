import Foundation

/// A distributed notification as the center hands it to a transport and gets it back: name,
/// object, userInfo and the poster's `deliverImmediately`.
///
/// Thread-safety: `@unchecked Sendable`: immutable after creation; its userInfo holds only the
/// property-list values ``PropertyListCoding`` decodes (strings, numbers, `Data`, arrays and
/// dictionaries of them), which are safe to read from any thread.
struct NotificationEnvelope: @unchecked Sendable {
    let name: String
    /// Nil on the wire is the empty string.
    let object: String?
    let userInfo: [AnyHashable: Any]?
    let deliverImmediately: Bool

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
