import Foundation

/// A distributed notification as the center hands it to a transport and gets it back: name,
/// object, userInfo and the poster's `deliverImmediately`.
///
/// Thread-safety: `@unchecked Sendable`: a value whose only change after creation is a copy's
/// ``provideUserInfo(asFields:)`` on the center's loop thread, before it is handed on; its userInfo
/// holds only the property-list values ``PropertyListCoding`` decodes (strings, numbers, `Data`,
/// arrays and dictionaries of them), which are safe to read from any thread.
package struct NotificationEnvelope: @unchecked Sendable {
    /// The notification's name (not empty).
    ///
    /// Thread-safety: immutable.
    package let name: String
    /// The object string, or nil (on the D-Bus wire nil is the empty string).
    ///
    /// Thread-safety: immutable.
    package let object: String?
    /// The userInfo as it was posted or read: fields, a property list, or both once an observer of
    /// the other form was served (``provideUserInfo(asFields:)``).
    package private(set) var payload: Payload

    /// What an envelope's userInfo is held as.
    ///
    /// Thread-safety: a value (property-list values only, see the envelope).
    package enum Payload {
        /// No userInfo.
        case none
        /// A property list (posted as one, or read from a JSON envelope).
        case propertyList([AnyHashable: Any])
        /// Fields (posted as fields, or read from a D-Bus signal or a binary Redis payload).
        case fields(BusFields)
        /// Both forms of the same userInfo.
        case both(BusFields, [AnyHashable: Any])
    }

    /// The poster's `deliverImmediately`.
    ///
    /// Thread-safety: immutable.
    package let deliverImmediately: Bool

    /// An envelope (`userInfo` holding only property-list values, as ``PropertyListCoding`` decodes).
    ///
    /// Thread-safety: a value type.
    package init(name: String, object: String?, userInfo: [AnyHashable: Any]?, deliverImmediately: Bool) {
        self.init(name: name, object: object, payload: userInfo.map { .propertyList($0) } ?? .none,
                  deliverImmediately: deliverImmediately)
    }

    /// An envelope whose userInfo is `fields` (nil: none).
    ///
    /// Thread-safety: a value type.
    package init(name: String, object: String?, fields: BusFields?, deliverImmediately: Bool) {
        self.init(name: name, object: object, payload: fields.map { .fields($0) } ?? .none,
                  deliverImmediately: deliverImmediately)
    }

    package init(name: String, object: String?, payload: Payload, deliverImmediately: Bool) {
        self.name = name
        self.object = object
        self.payload = payload
        self.deliverImmediately = deliverImmediately
    }

    /// The userInfo property list, or nil (made from the fields when it was posted or read as
    /// fields, as ``BusFields/propertyList`` makes it).
    ///
    /// Thread-safety: a value type.
    package var userInfo: [AnyHashable: Any]? {
        switch payload {
        case .none: nil
        case .propertyList(let dictionary), .both(_, let dictionary): dictionary
        case .fields(let fields): fields.propertyList
        }
    }

    /// The userInfo as fields, or nil for none (made from the property list when it was posted or
    /// read as one).
    ///
    /// Thread-safety: a value type.
    package var fields: BusFields? {
        switch payload {
        case .none: nil
        case .fields(let fields), .both(let fields, _): fields
        case .propertyList(let dictionary): BusFields(decodedPropertyList: dictionary)
        }
    }

    /// The number of userInfo entries (0 for none).
    ///
    /// Thread-safety: a value type.
    package var userInfoCount: Int {
        switch payload {
        case .none: 0
        case .propertyList(let dictionary): dictionary.count
        case .fields(let fields), .both(let fields, _): fields.count
        }
    }

    /// Adds the userInfo's other form when an observation takes it as fields (`asFields`) or as a
    /// property list and the envelope holds only the other one: made once here, so that every
    /// observation it is delivered (or held) for shares it. Nothing is copied when the form is
    /// already held.
    mutating func provideUserInfo(asFields: Bool) {
        switch payload {
        case .fields(let fields) where !asFields:
            payload = .both(fields, fields.propertyList)
        case .propertyList(let dictionary) where asFields:
            payload = .both(BusFields(decodedPropertyList: dictionary), dictionary)
        default:
            break
        }
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

    /// Whether `.coalesce` keeps one notification for both: the same name and object (compared
    /// in place; nothing is made per comparison).
    func hasSameCoalescingKey(as other: borrowing NotificationEnvelope) -> Bool {
        name == other.name && object == other.object
    }
}

extension NotificationEnvelope {
    /// The notification fields observers receive.
    var busNotification: BusNotification {
        BusNotification(name: Notification.Name(name), object: object, fields: fields ?? BusFields(),
                        deliverImmediately: deliverImmediately)
    }
}
