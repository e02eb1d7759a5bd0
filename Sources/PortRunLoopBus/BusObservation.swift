import Foundation
import PortRunLoopKit
import Synchronization

/// The token for one observation of a ``BusNotificationCenter``. The observation ends on
/// ``remove()``, on the center's `removeObserver`, or when the token is released (keep it).
///
/// Thread-safety: `Sendable`; every member is safe from any thread.
public final class BusObservation: Sendable, Hashable, CustomStringConvertible {
    let record: BusObservationRecord
    private let center: TracedMutex<WeakCenter>

    init(_ record: BusObservationRecord, center: BusNotificationCenter) {
        self.record = record
        self.center = TracedMutex(WeakCenter(center: center))
    }

    deinit { remove() }

    /// True until the observation ends.
    ///
    /// Thread-safety: any thread.
    public var isActive: Bool { record.isActive }

    /// Ends the observation: its bus subscription is withdrawn and no handler call starts after
    /// this returns (one already running on its loop may finish). Idempotent.
    ///
    /// Thread-safety: any thread.
    public func remove() {
        let owner = center.withLock { $0.center }
        if let owner { owner.end(record) } else { record.deactivate() }
    }

    /// Identity.
    ///
    /// Thread-safety: any thread.
    public static func == (lhs: BusObservation, rhs: BusObservation) -> Bool { lhs === rhs }

    /// Identity.
    ///
    /// Thread-safety: any thread.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// What is observed, and whether it still is.
    ///
    /// Thread-safety: any thread.
    public var description: String { "BusObservation(\(record.label), active: \(isActive))" }
}

/// A weak reference to a center.
///
/// Thread-safety: used under a lock.
struct WeakCenter {
    weak var center: BusNotificationCenter?
}

/// A weak reference to an observer object, loaded on the observation's loop thread.
///
/// Thread-safety: `@unchecked Sendable`: a weak reference, whose loads and stores the Swift runtime
/// makes atomic; the object is used only on the observation's loop thread.
final class WeakObserver: @unchecked Sendable {
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}

/// One observation: what it wants, where it is delivered, and (on the center's loop thread) what
/// it holds while the center is suspended.
///
/// Thread-safety: `@unchecked Sendable`: `filter`, `target`, `subscription` and `label` are
/// immutable; `active` is an atomic and `disconnectionReported` is guarded by its lock; `held` and
/// `overflowReported` are touched on the center's loop thread only (hence `@exclusivity(unchecked)`:
/// no dynamic check per delivery).
final class BusObservationRecord: @unchecked Sendable {
    enum Filter {
        case notifications(name: String?, object: String?, behavior: BusSuspensionBehavior)
        /// The transport's signals this closure accepts (cast to the type the observation takes).
        case signals(@Sendable (any Sendable) -> Bool)
        case disconnection
    }

    enum Target {
        case handler(PortRunLoop, @Sendable (Notification) -> Void)
        case fields(PortRunLoop, @Sendable (BusNotification) -> Void)
        case observer(PortRunLoop, WeakObserver, @Sendable (AnyObject, Notification) -> Void)
        case forward(ThreadNotificationCenter)
        case signal(PortRunLoop, @Sendable (any Sendable) -> Void)
        case disconnection(PortRunLoop, @Sendable (BusNotificationError) -> Void)
    }

    let filter: Filter
    let target: Target
    let subscription: TransportSubscriptionToken?
    let label: String
    /// Read on every delivery: an atomic, not a lock (cleared once, never set again).
    private let active = Atomic(true)
    private let disconnectionReported = TracedMutex(false)
    @exclusivity(unchecked) var held: [NotificationEnvelope] = []
    @exclusivity(unchecked) var overflowReported = false

    init(filter: Filter, target: Target, subscription: TransportSubscriptionToken?, label: String) {
        self.filter = filter
        self.target = target
        self.subscription = subscription
        self.label = label
    }

    var isActive: Bool { active.load(ordering: .acquiring) }

    /// Marks the observation ended; true for the call that ended it.
    @discardableResult
    func deactivate() -> Bool {
        active.exchange(false, ordering: .acquiringAndReleasing)
    }

    /// The transport reconnected: the next loss is reported again.
    func resetDisconnectionReport() {
        disconnectionReported.withLock { $0 = false }
    }

    /// True the first time after the connection was made or restored (a disconnection observer
    /// hears once per loss).
    func firstDisconnectionReport() -> Bool {
        disconnectionReported.withLock { reported in
            defer { reported = true }
            return !reported
        }
    }

    var behavior: BusSuspensionBehavior? {
        if case .notifications(_, _, let behavior) = filter { return behavior }
        return nil
    }

    func wants(_ envelope: NotificationEnvelope) -> Bool {
        guard case .notifications(let name, let object, _) = filter else { return false }
        return envelope.matches(name: name, object: object)
    }

    /// Whether the target takes the userInfo as fields (else as a property list; nil: neither).
    var wantsFields: Bool? {
        switch target {
        case .fields: true
        case .handler, .observer, .forward: false
        case .signal, .disconnection: nil
        }
    }

    var observer: AnyObject? {
        if case .observer(_, let box, _) = target { return box.object }
        return nil
    }
}
