import Foundation

/// A weak reference that may be read from any thread (Swift's weak loads are atomic). Never written
/// after init.
///
/// Thread-safety: `@unchecked Sendable`; immutable apart from the runtime zeroing the reference.
final class WeakObject: @unchecked Sendable {
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}

/// What a posted notification's `object` (its sender) is, classified once per post.
///
/// Thread-safety: `@unchecked Sendable`: it only holds what the notification already holds.
enum SenderKey: @unchecked Sendable {
    /// No sender (`object == nil`).
    case none
    /// A class instance: compared by identity.
    case object(AnyObject)
    /// A `Hashable` value: compared by equality.
    case value(AnyHashable)
    /// A value that is neither a class instance nor `Hashable`: equal to nothing.
    case unmatchable

    init(_ sender: Any?) {
        guard let sender else { self = .none; return }
        if type(of: sender) is AnyClass {
            self = .object(sender as AnyObject)
        } else if let hashable = sender as? AnyHashable {
            self = .value(hashable)
        } else {
            self = .unmatchable
        }
    }

    /// Coalescing equality: nil equals nil, objects by identity, values by `==`.
    func isSameSender(as other: SenderKey) -> Bool {
        switch (self, other) {
        case (.none, .none): true
        case (.object(let a), .object(let b)): a === b
        case (.value(let a), .value(let b)): a == b
        default: false
        }
    }
}

/// The sender an observation is restricted to: any sender, one object (by identity, held weakly),
/// or one `Hashable` value (by equality).
///
/// Thread-safety: `@unchecked Sendable`; immutable (the weak reference is read atomically).
enum SenderFilter: @unchecked Sendable {
    case any
    case object(ObjectIdentifier, WeakObject)
    case value(AnyHashable)

    /// Classifies `sender`. A value that is neither a class instance nor `Hashable` could never match
    /// a post, so it is rejected as a programmer error naming `caller`.
    init(_ sender: Any?, caller: @autoclosure () -> String) {
        switch SenderKey(sender) {
        case .none:
            self = .any
        case .object(let object):
            self = .object(ObjectIdentifier(object), WeakObject(object))
        case .value(let value):
            self = .value(value)
        case .unmatchable:
            Misuse.fail("\(caller()): the sender filter is a value of type \(type(of: sender!)), which is neither a class instance nor Hashable, so no post could ever match it; pass an object, a Hashable value, or nil")
        }
    }

    /// Whether a post from `key` passes the filter. An object filter whose object has gone matches
    /// nothing (a new object at the same address is a different sender).
    func matches(_ key: SenderKey) -> Bool {
        switch self {
        case .any:
            return true
        case .object(let id, let weak):
            guard case .object(let posted) = key, ObjectIdentifier(posted) == id else { return false }
            return weak.object != nil
        case .value(let value):
            guard case .value(let posted) = key else { return false }
            return posted == value
        }
    }

    /// Whether the filter was made from the same sender as `other` (for `removeObserver(_:name:object:)`).
    func isSame(as other: SenderFilter) -> Bool {
        switch (self, other) {
        case (.any, .any): true
        case (.object(let a, _), .object(let b, _)): a == b
        case (.value(let a), .value(let b)): a == b
        default: false
        }
    }

    /// The object to hand Foundation's center as its own `object:` filter: only class instances
    /// (corelibs' center never matches a value-type sender; we filter values ourselves).
    var foundationObject: AnyObject? {
        if case .object(_, let weak) = self { return weak.object }
        return nil
    }
}
