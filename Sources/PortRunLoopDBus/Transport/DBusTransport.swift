import CDBus
import Foundation
import Logging
import PortRunLoopKit

/// The D-Bus transport: one private libdbus connection embedded in a ``PortRunLoop``.
///
/// The connection's sockets are the loop's fd sources and its timeouts the loop's timers
/// (DBusWatch → ``PortRunLoop/watch(fileDescriptor:for:inModes:handler:)``, DBusTimeout →
/// ``RunLoopTimer``), and incoming messages are dispatched on the loop's thread right after the
/// socket was read. The connection is opened on the caller's thread (libdbus is initialised for
/// threads); from then on every libdbus call on it is made on the loop's thread: posts and
/// subscriptions from other threads hop there.
///
/// Notifications are signals in ``NotificationWireFormat``; a subscription is a D-Bus match rule
/// (`AddMatch`, waited for, so that it is in effect when ``subscribe(_:)`` returns).
///
/// Thread-safety: `@unchecked Sendable`. `connection` is a libdbus connection (libdbus is set up
/// for threads) used on `loop`'s thread, with three exceptions where no other thread uses it:
/// `start(delegate:)` installs the loop integration from the opening thread before the loop has
/// any of its sources; a `close()` after the loop shut down closes it on the closing thread; and
/// `deinit` frees it on the releasing thread, the last owner. `state` and `postQueue` are guarded
/// by their own locks; `loopState` is read and written on `loop`'s thread only.
final class DBusTransport: NotificationTransport, @unchecked Sendable {
    let loop: PortRunLoop
    let logger: Logger
    let timeoutMilliseconds: Int32
    let connection: OpaquePointer
    let localName: String?

    struct State {
        /// The loop sources standing for libdbus's enabled watches and timeouts, by their address
        /// (an integer: a pointer is not `Sendable`, and the state crosses threads).
        var watches: [UInt: FileDescriptorSource] = [:]
        var timeouts: [UInt: RunLoopTimer] = [:]
        var connected = true
        var closed = false
        weak var delegate: (any TransportDelegate)?
    }

    let state = TracedMutex(State())

    /// Posts from other threads waiting for the loop, in arrival order (sent by ``sendQueued()``).
    let postQueue = PostBatches<OutgoingMessage>()

    /// Loop-thread-only state.
    final class LoopState {
        var drainScheduled = false
        /// Inside `dbus_watch_handle` or `dbus_timeout_handle`: a drain follows, so libdbus'
        /// "data remains" report queues none.
        var drainFollows = false
        /// Inside a send batch: watch changes are applied once after it (``changedWatches``).
        var deferringWatchChanges = false
        var changedWatches: [OpaquePointer] = []
        /// libdbus holds a post it could not write whole (the socket was full, or the peer gone):
        /// until its outgoing queue is empty again, later posts wait in ``waitingToSend``.
        var libdbusHoldsAPost = false
        /// Posts waiting for libdbus to write the one it holds, in post order.
        var waitingToSend: [OutgoingMessage] = []
    }

    nonisolated(unsafe) let loopState = LoopState()

    /// How many messages one drain dispatches before it lets the loop serve its other sources.
    static let dispatchBudget = 256

    init(endpoint: BusEndpoint, loop: PortRunLoop, logger: Logger, timeout: Duration) throws(BusNotificationError) {
        self.loop = loop
        self.logger = logger
        let milliseconds = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
        self.timeoutMilliseconds = Int32(clamping: max(milliseconds, 1))
        self.connection = try DBusCall.connect(to: endpoint)
        self.localName = dbus_bus_get_unique_name(connection).map { String(cString: $0) }
    }

    deinit {
        // A private connection must be closed before its last reference goes (libdbus aborts
        // otherwise); `close()` normally did it on the loop's thread.
        if !state.withLock({ $0.closed }) { closeNow() }
        discardQueuedPosts()
        discardUnwrittenPosts()
        dbus_connection_unref(connection)
    }

    var isConnected: Bool { state.withLock { $0.connected && !$0.closed } }

    var delegate: (any TransportDelegate)? { state.withLock { $0.delegate } }

    func start(delegate: any TransportDelegate) {
        state.withLock { $0.delegate = delegate }
        installLoopIntegration()
        scheduleDrain()
    }

    // MARK: Subscriptions

    func subscribe(_ subscription: TransportSubscription) throws(BusNotificationError) -> TransportSubscriptionToken {
        switch subscription {
        case .notifications(let name, let object):
            var parts = ["type='signal'", "path='\(NotificationWireFormat.path)'",
                         "interface='\(NotificationWireFormat.interface)'", "member='\(NotificationWireFormat.member)'"]
            // The daemon refuses a rule longer than it takes (`LimitsExceeded`): a name or object
            // too long for it is matched by the center alone (which matches every notification
            // it receives against each observation anyway), at the cost of receiving the others.
            var length = parts.joined(separator: ",").utf8.count
            for match in [name.map { "arg0='\(BusMatchRule.quote($0))'" }, object.map { "arg1='\(BusMatchRule.quote($0))'" }] {
                guard let match, length + 1 + match.utf8.count <= Self.maximumMatchRuleLength else { continue }
                parts.append(match)
                length += 1 + match.utf8.count
            }
            return try addMatch(parts.joined(separator: ","))
        }
    }

    /// Subscribes to the signals `rule` matches (``BusNotificationCenter/addSignalObserver(matching:on:using:)``),
    /// once its fields are valid D-Bus.
    func subscribe(matching rule: BusMatchRule) throws(BusNotificationError) -> TransportSubscriptionToken {
        try rule.validate()
        return try addMatch(rule.ruleString)
    }

    /// Asks the bus for `rule` (`AddMatch`) and waits for its answer.
    private func addMatch(_ rule: String) throws(BusNotificationError) -> TransportSubscriptionToken {
        try onLoop { transport throws(BusNotificationError) in
            guard transport.isConnected else { throw .disconnected }
            // The call writes libdbus' whole outgoing queue first: a post it held may be gone.
            defer { transport.sendWaitingIfWritten() }
            try DBusCall.callBus(transport.connection, member: "AddMatch", arguments: [rule],
                                 timeoutMilliseconds: transport.timeoutMilliseconds)
        }
        return TransportSubscriptionToken(rule: rule)
    }

    /// The longest match rule dbus-daemon takes (`DBUS_MAXIMUM_MATCH_RULE_LENGTH`).
    static let maximumMatchRuleLength = 1024

    func unsubscribe(_ token: TransportSubscriptionToken) {
        let work: @Sendable () -> Void = { [self] in
            guard isConnected else { return }
            // No reply is waited for (a nil error asks libdbus not to).
            token.rule.withCString { dbus_bus_remove_match(connection, $0, nil) }
            sendWaitingIfWritten()
        }
        if loop.isCurrentThread { work() } else { loop.perform(work) }
    }

    /// Runs `body` on the loop's thread and waits for it (inline on that thread), at most the
    /// transport's timeout for it to start (a loop that is not running cannot serve it).
    private func onLoop(_ body: @escaping @Sendable (DBusTransport) throws(BusNotificationError) -> Void) throws(BusNotificationError) {
        if loop.isCurrentThread { return try body(self) }
        let result: Result<Void, BusNotificationError>
        do {
            result = try loop.performAndWait(timeout: .milliseconds(Int(timeoutMilliseconds))) {
                do throws(BusNotificationError) { try body(self); return .success(()) } catch { return .failure(error) }
            }
        } catch let error as PortRunLoopError {
            if case .timedOut = error { throw .timedOut }
            throw .disconnected
        } catch {
            throw .disconnected
        }
        try result.get()
    }

    // MARK: Closing

    func close() {
        if loop.isCurrentThread { closeNow(); return }
        // A shut-down loop runs nothing any more: close here (its thread is gone).
        if !loop.perform({ self.closeNow() }) { closeNow() }
    }

    func closeNow() {
        let first = state.withLock { state -> Bool in
            defer { state.closed = true }
            return !state.closed
        }
        guard first else { return }
        // Closing removes every watch and timeout through our callbacks (cancelling the loop's
        // sources); the functions are then cleared so that libdbus holds no pointer to us.
        // libdbus drops what it has not written: counted, with the posts waiting behind it.
        dbus_connection_close(connection)
        clearLoopIntegration()
        discardUnwrittenPosts()
    }

    /// Called from the message filter when libdbus reports the connection lost.
    func connectionLost() {
        let first = state.withLock { state -> Bool in
            defer { state.connected = false }
            return state.connected
        }
        guard first else { return }
        discardUnwrittenPosts()
        delegate?.transportDisconnected()
    }
}

/// A message handed from the posting thread to the loop's thread (not touched by the poster after).
///
/// Thread-safety: `@unchecked Sendable`: ownership moves with it; one thread uses it at a time.
struct OutgoingMessage: @unchecked Sendable {
    let pointer: OpaquePointer
}
