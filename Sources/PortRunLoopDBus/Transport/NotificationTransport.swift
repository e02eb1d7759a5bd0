import PortRunLoopKit

/// What a ``BusNotificationCenter`` needs from the bus it runs over. The D-Bus transport
/// (``DBusTransport``) is the one there is; a pub/sub transport (Redis on the loop's libevent
/// base, say) implements the same calls, and the center's public API does not change.
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
/// Other modules implement it through `@_spi(Transport) import PortRunLoopDBus` and make a center
/// over it with ``BusNotificationCenter/init(transport:endpoint:logger:heldNotificationLimit:callTimeout:)``.
///
/// Thread-safety: implementations are `Sendable`; every call is safe from any thread.
@_spi(Transport)
public protocol NotificationTransport: AnyObject, Sendable {
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
    /// Withdraws a subscription (asynchronously; the center filters locally meanwhile).
    func unsubscribe(_ token: TransportSubscriptionToken)
    /// Closes the connection (on the loop's thread; queued there when called from another).
    func close()
}

/// What a transport subscribes to.
///
/// Thread-safety: a value type.
@_spi(Transport)
public enum TransportSubscription: Sendable {
    /// Distributed notifications named `name` (nil: any) with object `object` (nil: any).
    case notifications(name: String?, object: String?)
    /// Raw bus signals (transports without such signals throw ``BusNotificationError/invalidMatchRule(_:)``).
    case signals(BusMatchRule)
}

/// A subscription, as the transport that made it identifies it.
///
/// Thread-safety: a value type.
@_spi(Transport)
public struct TransportSubscriptionToken: Sendable, Hashable {
    /// The transport's key for the subscription (D-Bus: the match rule).
    ///
    /// Thread-safety: immutable.
    public let rule: String

    /// A token for the subscription the transport calls `rule`.
    ///
    /// Thread-safety: a value type.
    public init(rule: String) { self.rule = rule }
}

/// What a transport reports to its center, on the transport's loop thread.
///
/// Thread-safety: called on the transport's loop thread only.
@_spi(Transport)
public protocol TransportDelegate: AnyObject, Sendable {
    /// A distributed notification arrived (handed over: the center keeps or drops it without a
    /// copy).
    func transportReceived(_ envelope: consuming NotificationEnvelope)
    /// Whether any observation takes raw bus signals: a transport makes a ``BusSignal`` for
    /// ``transportReceived(_:)`` only while this is true (read on the loop thread, per
    /// message).
    var observesSignals: Bool { get }
    /// A bus signal arrived (any signal the subscriptions matched, notifications included), while
    /// ``observesSignals``.
    func transportReceived(_ signal: BusSignal)
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
