import Foundation
import Logging
import PortRunLoopKit
import Synchronization

/// Notifications broadcast between processes over a message bus, delivered on a chosen
/// `PortRunLoop`: the counterpart of Apple's `DistributedNotificationCenter`, which
/// swift-corelibs-foundation does not provide. The bus is a transport's: PortRunLoopDBus makes a
/// center over D-Bus, PortRunLoopRedis one over Redis pub/sub, with the same API.
///
/// - **Posting** (``post(name:object:userInfo:deliverImmediately:)``) from any thread sends the
///   notification to every observing process, this one included (the transports' guides,
///   PortRunLoopDBus.docc/DBusNotifications.md and PortRunLoopRedis.docc/RedisNotifications.md,
///   have the wire formats, so other programs can post and observe too). Bad input is a typed
///   error at the call.
/// - **Observing** by name and object string, with a closure, an observer object held weakly, or by
///   forwarding into a `ThreadNotificationCenter`; delivered on the observation's loop (default
///   `PortRunLoop.main`, as Apple delivers on the main thread). Over D-Bus, any D-Bus signal can
///   be observed by match rule (PortRunLoopDBus's `addSignalObserver(matching:on:using:)`).
/// - **Suspension** (``suspended``) with Apple's per-observation ``BusSuspensionBehavior``s.
/// - **The connection** runs on ``loop``: its socket and timeouts are that loop's sources, no thread
///   of its own. Losing the bus is reported (``isConnected``, ``addDisconnectionObserver(on:using:)``)
///   and makes later calls throw ``BusNotificationError/disconnected``; nothing waits for a dead bus.
///
/// Thread-safety: `Sendable`; every member is safe from any thread. Handlers run on their
/// observation's loop thread; the connection is serviced on ``loop``'s thread, which must run
/// (`PortRunLoop.run()`) for anything to be received.
public final class BusNotificationCenter: @unchecked Sendable {
    /// The bus this center is connected to.
    ///
    /// Thread-safety: immutable.
    public let endpoint: BusEndpoint
    /// The loop whose thread runs the bus connection (its sources), applies suspension and hands
    /// notifications to observations.
    ///
    /// Thread-safety: immutable.
    public let loop: PortRunLoop
    /// Where the center logs dropped malformed notifications (`.warning`, per notification, with
    /// the sender), hold overflows (`.warning`, once per observation and suspension) and the loss
    /// of the bus (`.error`, once). Nothing is logged per delivered notification.
    ///
    /// Thread-safety: immutable.
    public let logger: Logger
    /// How many notifications one `.hold` observation keeps while the center is suspended (for a
    /// `.coalesce` one: how many distinct name and object pairs); later ones are discarded and
    /// counted (``BusNotificationCenterMetrics/heldOverflow``).
    ///
    /// Thread-safety: immutable.
    public let heldNotificationLimit: Int
    /// How long a call that waits for the bus (adding an observation: D-Bus `AddMatch`, Redis
    /// `SUBSCRIBE`) may take, and how long a call from another thread waits for ``loop`` to take it.
    ///
    /// Thread-safety: immutable.
    public let callTimeout: Duration

    /// The default ``heldNotificationLimit``.
    ///
    /// Thread-safety: a constant.
    public static let defaultHeldNotificationLimit = 10_000

    /// The longest notification name or object, in UTF-8 bytes, a post accepts.
    ///
    /// Thread-safety: a constant.
    public static let maximumNameLength = 16_384

    /// The transport the center runs over.
    ///
    /// Thread-safety: immutable; the transport is `Sendable`.
    package let transport: any NotificationTransport

    struct State {
        var observations: [BusObservationRecord] = []
        var metrics = BusNotificationCenterMetrics()
        /// What ``suspended`` was last set to (applied on the loop's thread).
        var requestedSuspension = false
        var disconnectionLogged = false
        /// ``close()`` was called: what follows is not a loss.
        var closed = false
    }

    let state = TracedMutex(State())

    /// How many observations take raw bus signals (written under `state`'s lock, read without it
    /// on the loop's thread for each message: ``observesSignals``).
    let signalObservationCount = Atomic<Int>(0)
    /// ``BusNotificationCenterMetrics/posted``, counted outside ``state``'s lock: a post from any
    /// thread takes none of the center's locks (its transport's post queue has its own).
    private let postedCount = Atomic<Int>(0)

    /// The suspension in effect, read and written on ``loop``'s thread only (so without the
    /// runtime's dynamic exclusivity check, which every received notification would pay).
    final class LoopState {
        @exclusivity(unchecked) var suspended = false
    }

    nonisolated(unsafe) let loopState = LoopState()

    /// A center over `transport` (which a transport's module implements, and makes the center with
    /// a convenience initialiser of its own): starts it with the center as its delegate. The
    /// center's ``loop`` is the transport's.
    ///
    /// - Parameters:
    ///   - transport: a transport not started yet.
    ///   - endpoint: what ``endpoint`` reports (e.g. ``BusEndpoint/transport(_:)``).
    ///   - logger: see ``logger``; the default logs nothing.
    ///   - heldNotificationLimit: see ``heldNotificationLimit``; at least 1.
    ///   - callTimeout: see ``callTimeout``; positive.
    ///
    /// Thread-safety: any thread.
    package init(transport: any NotificationTransport, endpoint: BusEndpoint, logger: Logger = BusNotificationCenter.disabledLogger,
                 heldNotificationLimit: Int = BusNotificationCenter.defaultHeldNotificationLimit,
                 callTimeout: Duration = .seconds(5)) {
        Self.check(heldNotificationLimit: heldNotificationLimit, callTimeout: callTimeout)
        self.endpoint = endpoint
        self.loop = transport.loop
        self.logger = logger
        self.heldNotificationLimit = heldNotificationLimit
        self.callTimeout = callTimeout
        self.transport = transport
        transport.start(delegate: self)
    }

    deinit {
        transport.close()
    }

    /// Traps unless `heldNotificationLimit` is at least 1 and `callTimeout` positive (a transport's
    /// initialiser checks them before it connects).
    ///
    /// Thread-safety: any thread.
    package static func check(heldNotificationLimit: Int, callTimeout: Duration) {
        Misuse.check(heldNotificationLimit >= 1, "BusNotificationCenter: heldNotificationLimit must be at least 1")
        Misuse.check(callTimeout > .zero, "BusNotificationCenter: callTimeout must be positive")
    }

    /// A logger that logs nothing (the default).
    ///
    /// Thread-safety: a constant.
    public static let disabledLogger = Logger(label: "PortRunLoopBus", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The connection's unique name on the bus (e.g. `:1.42`): the `sender` of what it posts.
    ///
    /// Thread-safety: immutable.
    public var uniqueName: String? { transport.localName }

    /// False once the bus connection is gone (the daemon exited or the center was closed).
    ///
    /// Thread-safety: any thread.
    public var isConnected: Bool { transport.isConnected }

    /// The center's counts so far.
    ///
    /// Thread-safety: any thread.
    public var metrics: BusNotificationCenterMetrics {
        var metrics = state.withLock { $0.metrics }
        metrics.posted = postedCount.load(ordering: .relaxed)
        return metrics
    }

    // MARK: Posting

    /// Broadcasts a notification to every process observing it on the bus, this one included.
    ///
    /// - Parameters:
    ///   - name: not empty, no NUL, at most ``maximumNameLength`` UTF-8 bytes.
    ///   - object: an optional string (Apple's distributed object is a string too): no NUL, at most
    ///     ``maximumNameLength`` bytes; nil travels as the empty string, so `""` arrives as nil.
    ///   - userInfo: a property list with `String` keys: strings, integers, doubles, bools, `Data`,
    ///     arrays and dictionaries of them (<doc:DistributedNotifications>, "userInfo").
    ///   - deliverImmediately: deliver even to observations of a suspended center, whatever their
    ///     ``BusSuspensionBehavior``.
    /// - Throws: ``BusNotificationError/invalidName(_:)``, ``BusNotificationError/invalidObject(_:)``,
    ///   ``BusNotificationError/unsupportedUserInfoValue(keyPath:type:)`` (nothing is sent), or
    ///   ``BusNotificationError/disconnected``.
    ///
    /// Posts from one thread are sent, and received by every observer, in call order. The call does
    /// not wait for the bus: it queues the signal on ``loop``, which sends it.
    ///
    /// Thread-safety: any thread.
    public func post(name: Notification.Name, object: String? = nil, userInfo: [AnyHashable: Any]? = nil,
                     deliverImmediately: Bool = false) throws(BusNotificationError) {
        try post(NotificationEnvelope(name: name.rawValue, object: object, userInfo: userInfo,
                                      deliverImmediately: deliverImmediately))
    }

    /// Broadcasts a notification whose userInfo is typed `fields`: the same signal or payload as
    /// ``post(name:object:userInfo:deliverImmediately:)`` with the fields' property list (so
    /// observers of either form, and other programs, receive the same), written without a
    /// `[AnyHashable: Any]` and the casts of its keys and values. Otherwise as that call.
    ///
    /// - Throws: ``BusNotificationError/invalidName(_:)``, ``BusNotificationError/invalidObject(_:)``
    ///   or ``BusNotificationError/disconnected``.
    ///
    /// Thread-safety: any thread.
    public func post(name: Notification.Name, object: String? = nil, fields: BusFields,
                     deliverImmediately: Bool = false) throws(BusNotificationError) {
        try post(NotificationEnvelope(name: name.rawValue, object: object, fields: fields.isEmpty ? nil : fields,
                                      deliverImmediately: deliverImmediately))
    }

    /// Checks `envelope`'s name and object, then hands it to the transport (both public posts).
    private func post(_ envelope: NotificationEnvelope) throws(BusNotificationError) {
        try Self.validate(name: envelope.name)
        if let object = envelope.object { try Self.validate(object: object) }
        try transport.post(envelope)
        postedCount.add(1, ordering: .relaxed)
    }

    static func validate(name: String) throws(BusNotificationError) {
        if name.isEmpty { throw .invalidName("empty") }
        if containsNUL(name) { throw .invalidName("contains NUL") }
        if name.utf8.count > maximumNameLength { throw .invalidName("longer than \(maximumNameLength) bytes") }
    }

    /// Whether `text` holds a NUL byte (a native string's bytes are scanned in place, by `memchr`).
    private static func containsNUL(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { utf8 in
            guard let base = utf8.baseAddress else { return false }
            return memchr(base, 0, utf8.count) != nil
        } ?? text.utf8.contains(0)
    }

    static func validate(object: String) throws(BusNotificationError) {
        if containsNUL(object) { throw .invalidObject("contains NUL") }
        if object.utf8.count > maximumNameLength { throw .invalidObject("longer than \(maximumNameLength) bytes") }
    }

    // MARK: Closing

    /// Closes the bus connection: observations end, later posts throw
    /// ``BusNotificationError/disconnected``. Runs on ``loop`` (queued there from another thread).
    /// Also done when the center is released. Idempotent.
    ///
    /// Thread-safety: any thread.
    public func close() {
        let records = state.withLock { state in
            state.closed = true
            defer {
                state.observations.removeAll()
                signalObservationCount.store(0, ordering: .relaxed)
            }
            return state.observations
        }
        records.forEach { $0.deactivate() }
        transport.close()
    }
}
