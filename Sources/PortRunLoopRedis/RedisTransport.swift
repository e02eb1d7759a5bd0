import CHiredis
import Foundation
import Logging
import PortRunLoopBus
import PortRunLoopKit

/// The Redis transport: notifications as Redis pub/sub messages (one channel per name,
/// ``RedisChannelNaming``; a binary or JSON payload, ``RedisWireFormat``), over two hiredis async
/// connections run by one ``PortRunLoop`` on its thread — one that publishes, one that is
/// subscribed (a subscribed Redis connection can issue nothing but (un)subscriptions).
///
/// - Posting encodes the whole PUBLISH command on the caller's thread and publishes from the loop,
///   in call order per calling thread; posts from other threads are batched (one wake-up of the
///   loop per batch, one write per batch). While the connection is down, posts are kept (up to
///   ``RedisEndpoint/disconnectedPostLimit``, then dropped and counted) and sent once it is back.
/// - Subscribing reference-counts channels; the first observation of a channel waits for the
///   server's confirmation, the last one's removal unsubscribes (asynchronously).
/// - A lost connection (server gone, reset, a command unanswered for
///   ``RedisEndpoint/commandTimeout``) is reported once to the delegate; both connections are
///   reopened with back-off (``RedisReconnectPolicy``), every subscription is restored, then kept
///   posts are sent and the recovery is reported (``TransportDelegate/transportReconnected()``).
///
/// Durable names (``RedisEndpoint/durable``) are appended to Redis Streams and read by a third
/// connection instead (RedisTransport+Durable.swift).
///
/// Thread-safety: `@unchecked Sendable`. `shared` and `postQueue` are guarded by their own locks;
/// `loopState` is read and written on `loop`'s thread only, except by a `close()` made after the
/// loop shut down, on the closing thread (the loop's thread is gone, and the shutdown it saw
/// orders that thread's last writes before it); the rest is immutable.
final class RedisTransport: NotificationTransport, @unchecked Sendable {
    let loop: PortRunLoop
    let endpoint: RedisEndpoint
    let logger: Logger
    let callTimeout: Duration
    let localName: String?
    /// ``RedisDurableNotifications/names`` (empty without durable names): what `post` looks up.
    let durableNames: Set<String>

    /// The private mode the transport's sockets, timers and connection events also run in, so that
    /// a caller on the loop's thread can wait for the server (``LoopWaiter``).
    static let waitMode = RunLoop.Mode("PortRunLoopRedis.wait")
    /// The modes of the transport's sources and connection events.
    static let modes: [RunLoop.Mode] = [.common, waitMode]

    struct Shared {
        var state: RedisConnectionState = .connecting
        /// Counts the changes of `state` (the first state is version 1): observers skip a
        /// delivery older than one they got (``RedisStateObservation``).
        var stateVersion: UInt64 = 1
        var metrics = RedisTransportMetrics()
        var closed = false
        weak var delegate: (any TransportDelegate)?
        /// Held weakly: releasing its token ends an observation.
        var stateObservers: [ObjectIdentifier: WeakReference<RedisStateObservation>] = [:]
    }

    let shared = TracedMutex(Shared())
    /// Posts from other threads on their way to the loop (its own lock: posting never waits for
    /// the metrics or state readers).
    let postQueue = PostBatches<PendingPublish>()

    /// What the transport keeps on the loop's thread. The fields every received message touches
    /// are `@exclusivity(unchecked)`: one thread ever uses them, so the runtime's dynamic
    /// exclusivity check (~80 instructions per access) has nothing to find.
    final class LoopState {
        var publisher: RedisConnection?
        var subscriber: RedisConnection?
        /// The connection that reads durable streams (endpoints with ``RedisEndpoint/durable``).
        var reader: RedisConnection?
        /// The durable streams observed, and the reading connection's state.
        let durable = DurableStreams()
        /// Every channel or pattern someone observes, and where it stands at the server.
        var subscriptions: [SubscriptionKey: SubscriptionState] = [:]
        /// Subscriptions sent after the subscriber (re)connected and not confirmed yet.
        var restoring: Set<SubscriptionKey> = []
        /// The subscriber's opening was handled (its subscriptions sent): until then, `restoring`
        /// is not yet filled, so the transport cannot be ready.
        var subscriberSetUp = false
        /// Both connections up and every subscription restored: posts go out, not into `buffered`.
        var ready = false
        var everReady = false
        /// A loss was reported and the recovery not yet.
        var lossReported = false
        var buffered: [PendingPublish] = []
        var dropReported = false
        var reconnectDelay: Duration
        /// When the transport last became ready: a connection lost within
        /// ``RedisReconnectPolicy/healthyAfter`` of it does not bring the delay back to the initial one.
        var readySince: ContinuousClock.Instant?
        var reconnectTimer: RunLoopTimer?
        var startWaiters: [LoopWaiter] = []
        /// Callers of ``flush(timeout:)``, in the order of their PINGs on the publisher.
        var flushWaiters: [LoopWaiter] = []
        /// Messages read, waiting for the common-mode drain that hands them to the delegate (each
        /// slot optional so that the drain can move its message out, leaving nil).
        @exclusivity(unchecked) var inbox: [IncomingMessage?] = []
        /// The inbox's previous storage, swapped back in by the next drain.
        @exclusivity(unchecked) var spareInbox: [IncomingMessage?] = []
        /// The last channel's name, reused while messages keep coming on that channel.
        @exclusivity(unchecked) var channelNames = RedisChannelNaming.NameCache()
        /// PUBLISH replies read and not yet added to the metrics.
        var confirmedUncounted = 0
        @exclusivity(unchecked) var drainScheduled = false
        /// Sentinel endpoints: the search for the master under way, the subscription to
        /// `+switch-master`, the master the connections go to, one a sentinel announced (used by
        /// the next connection instead of asking), and the sentinel to ask first.
        var discovery: SentinelDiscovery?
        var watch: SentinelWatch?
        var master: RedisSentinels.Address?
        var announcedMaster: RedisSentinels.Address?
        var firstSentinel = 0

        init(reconnectDelay: Duration) { self.reconnectDelay = reconnectDelay }
    }

    nonisolated(unsafe) let loopState: LoopState

    init(endpoint: RedisEndpoint, loop: PortRunLoop, logger: Logger, callTimeout: Duration) {
        self.loop = loop
        self.endpoint = endpoint
        self.logger = logger
        self.callTimeout = callTimeout
        self.localName = Self.makeSenderName()
        self.durableNames = endpoint.durable?.names ?? []
        self.loopState = LoopState(reconnectDelay: endpoint.reconnectPolicy.initialDelay)
        BrokenPipeSignal.ignoreIfDefault()
    }

    /// `host:pid:random`, unique per transport: the `sender` of what it posts.
    private static func makeSenderName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let host = gethostname(&buffer, buffer.count) == 0
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "localhost"
        let random = String(UInt32.random(in: .min ... .max), radix: 16)
        return "\(host):\(getpid()):\(random)"
    }

    var isConnected: Bool { shared.withLock { $0.state == .connected } }

    var connectionState: RedisConnectionState { shared.withLock { $0.state } }

    var metrics: RedisTransportMetrics { shared.withLock { $0.metrics } }

    var delegate: (any TransportDelegate)? { shared.withLock { $0.delegate } }

    var isClosed: Bool { shared.withLock { $0.closed } }

    func start(delegate: any TransportDelegate) {
        shared.withLock { $0.delegate = delegate }
        onLoop { $0.connect() }
    }

    /// Waits (at most ``RedisEndpoint/connectTimeout`` plus ``callTimeout``, plus a connect and
    /// a command timeout per sentinel of a sentinel endpoint) for the first
    /// connection; throws ``BusNotificationError/connectionFailed(_:)`` when it was refused or did
    /// not come (a server that is absent, or a loop that does not run).
    func waitUntilConnected() throws(BusNotificationError) {
        let waiter = makeWaiter()
        let queued = onLoop { transport in
            if transport.loopState.ready || transport.loopState.everReady {
                waiter.finish(.success(()))
            } else {
                transport.loopState.startWaiters.append(waiter)
            }
        }
        guard queued else { throw .connectionFailed("\(loop.name) is shut down") }
        // Through sentinels, each may take a connection and a question before the master is asked.
        let perSentinel = endpoint.connectTimeout + endpoint.commandTimeout
        let bound = endpoint.connectTimeout + callTimeout + perSentinel * (endpoint.sentinels?.addresses.count ?? 0)
        switch waiter.wait(timeout: bound) {
        case .success?: return
        case .failure(let error)?: throw error
        case nil: throw .connectionFailed("no connection to \(endpoint) within \(bound) (is \(loop.name) running?)")
        }
    }

    /// Runs `body` on the loop's thread: inline there, else queued in the transport's modes (false
    /// when the loop is shut down).
    @discardableResult
    func onLoop(_ body: @escaping @Sendable (RedisTransport) -> Void) -> Bool {
        if loop.isCurrentThread {
            body(self)
            return true
        }
        return loop.perform(inModes: Self.modes) { body(self) }
    }

    // MARK: Closing

    func close() {
        let first = shared.withLock { shared -> Bool in
            defer { shared.closed = true }
            return !shared.closed
        }
        guard first else { return }
        setState(.closed)
        // A shut-down loop runs nothing any more: its thread is gone, so close here.
        if !onLoop({ $0.closeNow(loopRuns: true) }) { closeNow(loopRuns: false) }
    }

    /// Closes both connections; `loopRuns` false when the loop has shut down (this runs on the
    /// closing thread then, and nothing of hiredis' can be running).
    private func closeNow(loopRuns: Bool) {
        let state = loopState
        state.reconnectTimer?.invalidate()
        state.reconnectTimer = nil
        state.discovery?.cancel()
        state.discovery = nil
        state.watch?.stop()
        state.watch = nil
        state.ready = false
        // On a running loop, posts already handed to hiredis are still written and answered (a
        // server that does not answer is dropped by the command timeout). Without one nothing
        // would read the answers or run the timeout: the connection is freed now, its posts
        // counted as unconfirmed. The subscription ends at once either way.
        if loopRuns { state.publisher?.closeAfterReplies() } else { state.publisher?.drop("closed") }
        state.subscriber?.drop("closed")
        state.reader?.drop("closed")
        let unsent = state.buffered.count
        state.buffered.removeAll()
        shared.withLock { shared in
            shared.metrics.bufferedWhileDisconnected = 0
            shared.metrics.droppedWhileDisconnected += unsent
        }
        for waiter in state.startWaiters + state.flushWaiters { waiter.finish(.failure(.disconnected)) }
        state.startWaiters.removeAll()
        state.flushWaiters.removeAll()
        failSubscriptionWaiters(with: .disconnected)
    }

    // MARK: State

    /// Publishes a new state to ``connectionState`` and its observers.
    func setState(_ new: RedisConnectionState) {
        let (observers, version) = shared.withLock { shared -> ([RedisStateObservation], UInt64) in
            if shared.state == .closed || shared.state == new { return ([], 0) }
            shared.state = new
            shared.stateVersion += 1
            // Strong references for the calls below, released after the lock: a token released
            // meanwhile on another thread ends its observation (which takes the lock) out here.
            return (shared.stateObservers.values.compactMap(\.object), shared.stateVersion)
        }
        for observer in observers { observer.deliver(new, version: version) }
    }

    func addStateObserver(_ observation: RedisStateObservation) {
        let (current, version) = shared.withLock { shared in
            shared.stateObservers[ObjectIdentifier(observation)] = WeakReference(object: observation)
            return (shared.state, shared.stateVersion)
        }
        observation.deliver(current, version: version)
    }

    func removeStateObserver(_ observation: RedisStateObservation) {
        shared.withLock { _ = $0.stateObservers.removeValue(forKey: ObjectIdentifier(observation)) }
    }
}

/// A message read from the subscribed connection (decoded at once), waiting to be delivered.
///
/// Thread-safety: a value type (an envelope is immutable).
enum IncomingMessage: Sendable {
    case notification(NotificationEnvelope)
    case malformed(channel: String, reason: MalformedPayload)
}

