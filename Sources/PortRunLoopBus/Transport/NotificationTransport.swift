import PortRunLoopKit

/// What a ``BusNotificationCenter`` needs from the bus it runs over. PortRunLoopDBus implements it
/// over D-Bus and PortRunLoopRedis over Redis pub/sub; the center's public API is the same over
/// either.
///
/// Rules every transport keeps:
/// - Everything it does with its connection happens on ``loop``'s thread, as that loop's sources
///   (no thread of its own). The delegate is called on that thread only.
/// - ``post(_:)`` validates and encodes on the calling thread (throwing a typed error for bad
///   input) and sends in call order per calling thread.
/// - ``subscribe(_:)`` returns once the subscription is in effect at the bus (a notification posted
///   after it returns is received), or throws.
/// - Losing the connection is reported once, through ``TransportDelegate/transportDisconnected()``;
///   afterwards calls throw ``BusNotificationError/disconnected``. A transport that reconnects on
///   its own (Redis) reports each loss once and each recovery through
///   ``TransportDelegate/transportReconnected()``; between the two its calls throw or buffer as that
///   transport documents, and after ``close()`` they throw ``BusNotificationError/disconnected``.
///
/// A transport's module implements it (package access: the transports are modules of this
/// package) and makes a center over it with
/// ``BusNotificationCenter/init(transport:endpoint:logger:heldNotificationLimit:callTimeout:)``.
///
/// Thread-safety: implementations are `Sendable`; every call is safe from any thread.
package protocol NotificationTransport: AnyObject, Sendable {
    /// The loop whose thread runs the connection and calls the delegate.
    var loop: PortRunLoop { get }
    /// Whether the connection is up.
    var isConnected: Bool { get }
    /// The transport's own name on the bus (D-Bus: the unique connection name).
    var localName: String? { get }
    /// Starts receiving; `delegate` is held weakly and called on ``loop``'s thread.
    func start(delegate: any TransportDelegate)
    /// Sends a notification to every subscriber of the bus, this process included.
    func post(_ envelope: NotificationEnvelope) throws(BusNotificationError)
    /// Asks the bus for what `subscription` describes.
    func subscribe(_ subscription: TransportSubscription) throws(BusNotificationError) -> TransportSubscriptionToken
    /// The center registered the observation `token` was made for: what the transport receives
    /// from now on reaches it (a transport that reads what it was away for waits for this before
    /// it reads). The default does nothing.
    func subscriptionRegistered(_ token: TransportSubscriptionToken)
    /// Withdraws a subscription (asynchronously; the center filters locally meanwhile).
    func unsubscribe(_ token: TransportSubscriptionToken)
    /// Closes the connection (on the loop's thread; queued there when called from another).
    func close()
}

extension NotificationTransport {
    /// Nothing to do.
    ///
    /// Thread-safety: any thread.
    package func subscriptionRegistered(_ token: TransportSubscriptionToken) {}
}

/// What a transport subscribes to for the center. (A transport's own signals, such as D-Bus match
/// rules, are subscribed to by its module, which then registers the observation with
/// ``BusNotificationCenter/observeSignals(_:subscription:on:label:accepting:using:)``.)
///
/// Thread-safety: a value type.
package enum TransportSubscription: Sendable {
    /// Distributed notifications named `name` (nil: any) with object `object` (nil: any).
    case notifications(name: String?, object: String?)
}

/// A subscription, as the transport that made it identifies it.
///
/// Thread-safety: a value type.
package struct TransportSubscriptionToken: Sendable, Hashable {
    /// The transport's key for the subscription (D-Bus: the match rule).
    ///
    /// Thread-safety: immutable.
    package let rule: String

    /// A token for the subscription the transport calls `rule`.
    ///
    /// Thread-safety: a value type.
    package init(rule: String) { self.rule = rule }
}

/// What a transport reports to its center, on the transport's loop thread.
///
/// Thread-safety: called on the transport's loop thread only.
package protocol TransportDelegate: AnyObject, Sendable {
    /// A distributed notification arrived (handed over: the center keeps or drops it without a
    /// copy).
    func transportReceived(_ envelope: consuming NotificationEnvelope)
    /// Whether any observation takes the transport's signals: a transport makes a signal value
    /// for ``transportReceived(signal:)`` only while this is true (read on the loop thread, per
    /// message).
    var observesSignals: Bool { get }
    /// A signal of the transport's own arrived (D-Bus: a ``BusValue``-typed signal, any the
    /// subscriptions matched, notifications included), while ``observesSignals``.
    func transportReceived(signal: any Sendable)
    /// A notification-shaped message could not be read: dropped (the center counts and logs it).
    func transportDroppedMalformed(from sender: String, reason: String)
    /// Posts the center had accepted were released unsent: the connection was lost, or the loop
    /// shut down, before they went out. The center counts and logs them. Called on any thread
    /// (a poster's, when the loop has shut down).
    func transportDiscardedUnsent(count: Int)
    /// The connection is gone.
    func transportDisconnected()
    /// A reconnecting transport has its connection back (after ``transportDisconnected()``), its
    /// subscriptions in effect again.
    func transportReconnected()
}
