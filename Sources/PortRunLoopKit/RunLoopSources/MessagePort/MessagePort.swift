import Foundation
import Logging
import ServiceContextModule
import Synchronization

/// A port a ``PortRunLoop`` listens on: the Linux stand-in for `NSMachPort`/`NSMessagePort`.
///
/// Any thread sends; the loop the port is scheduled in delivers each message to the port's
/// ``delegate`` (or ``setHandler(_:)`` closure) on its own thread, first in, first out.
///
/// Like a Mach port, a port has a queue limit (``defaultQueueLimit`` = 5, as `MACH_PORT_QLIMIT_DEFAULT`).
/// A message counts against it from `send` until the loop takes it for delivery. When the queue is
/// full, `send` waits for room until its date; a date now or in the past tries once. Messages sent
/// while the loop is not running (or before the port is scheduled) are held and delivered when it
/// next runs.
///
/// A port can be published for other processes, and a *remote* port (from
/// ``MessagePortNameRegistry/remotePort(named:options:readingOn:)``) stands for a port of another
/// process: its sends cross a Unix socket, bounded by credits instead of a local queue, and it is
/// never scheduled in a loop (its ``queueLimit`` and handler are unused). See <doc:CrossProcessPorts>.
///
/// Thread-safety: `Sendable`; every member is safe from any thread. Handlers run on the loop's thread.
public final class MessagePort: @unchecked Sendable, Hashable, CustomStringConvertible {
    /// Mach's default queue limit, `MACH_PORT_QLIMIT_DEFAULT`.
    ///
    /// Thread-safety: a constant.
    public static let defaultQueueLimit = 5

    // Layout matters here (stored properties are laid out in declaration order). The loop's thread
    // writes the object's first cache line once per delivered message (`deliveredCounter`);
    // senders read `stateStorage` once per send. `cacheLinePadding` keeps the two at
    // least 64 bytes apart, so a burst does not bounce one cache line between the two CPUs on
    // every message (false sharing). `state` and `ownerBuffer` live on cache lines of their own
    // (``CacheLine``) for the same reason: the loop pops `ownerBuffer` per message.

    /// Delivered / discarded-by-the-loop counts, written by the loop's thread only.
    let deliveredCounter = OwnerCounter()
    let ownerDiscardedCounter = SharedCounter()
    /// Decides whether a handler may start (closed by `invalidate`).
    let gate = DeliveryGate()
    /// Messages the loop has taken for delivery. Owner (loop) thread only; behind a pointer for
    /// the same reason as `state` (one pop per delivered message).
    private let ownerBufferStorage: UnsafeMutablePointer<HandoffQueue<Envelope>>
    var ownerBuffer: HandoffQueue<Envelope> {
        unsafeAddress { UnsafePointer(ownerBufferStorage) }
        unsafeMutableAddress { ownerBufferStorage }
    }
    private let cacheLinePadding: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
    // Guarded by its own `word` (``lock()``). Kept behind a pointer and reached through addressors, so that `send` and
    // the loop's delivery pay no dynamic exclusivity check (swift_beginAccess/endAccess, two TLS
    // look-ups each) per access: the lock, not the compiler, is what serializes access here.
    let stateStorage: UnsafeMutablePointer<State>
    var state: State {
        unsafeAddress { UnsafePointer(stateStorage) }
        unsafeMutableAddress { stateStorage }
    }
    /// The logger passed to `init`; nil: the logger of the loop the port is scheduled in.
    private let ownLogger: Logger?
    /// Set for a port that stands for a port in another process (CrossProcess/): sends go to it,
    /// and the port is never scheduled in a loop.
    let remote: (any RemoteEndpoint)?
    /// What the first invalidation calls (internal observers: CrossProcess/ unpublishes the port's
    /// name; the user's handler) and records (the reason, the port's loop then).
    let invalidation = TracedMutex(InvalidationRecord())
    /// Whether a message from another process was ever queued (only then does a discard look for
    /// credits to give back). Set before such a message is queued under the lock.
    let remoteSendersSeen = Atomic<Bool>(false)

    /// Makes a port with the given queue limit (at least 1).
    ///
    /// - Parameters:
    ///   - queueLimit: the most messages that may wait for delivery at once.
    ///   - logger: where the port logs messages discarded by ``invalidate()`` (`.notice`, with the
    ///     count) and sends rejected because it stayed full (`.warning`, aggregated: the first
    ///     rejection, then one entry per ``rejectionLogInterval`` rejections, with the counts);
    ///     never anything per message. nil (the default): the ``PortRunLoop/logger`` of the loop
    ///     the port is scheduled in when there is something to log, or nothing if it is in none.
    ///
    /// Thread-safety: any thread.
    public init(queueLimit: Int = MessagePort.defaultQueueLimit, logger: Logger? = nil) {
        Misuse.check(queueLimit >= 1, "MessagePort: the queue limit must be at least 1, got \(queueLimit)")
        ownLogger = logger
        remote = nil
        stateStorage = CacheLine.allocate(State(limit: queueLimit))
        ownerBufferStorage = CacheLine.allocate(HandoffQueue<Envelope>())
    }

    /// A port whose sends go to `remote` (a port of another process).
    init(remote: any RemoteEndpoint, logger: Logger?) {
        ownLogger = logger
        self.remote = remote
        stateStorage = CacheLine.allocate(State(limit: MessagePort.defaultQueueLimit))
        ownerBufferStorage = CacheLine.allocate(HandoffQueue<Envelope>())
    }

    deinit {
        CacheLine.free(stateStorage)
        CacheLine.free(ownerBufferStorage)
    }

    /// The most messages that can wait for delivery at once (at least 1). Raising it wakes senders
    /// waiting for room.
    ///
    /// Thread-safety: any thread.
    public var queueLimit: Int {
        get { withLock { state.limit } }
        set {
            Misuse.check(newValue >= 1, "MessagePort.queueLimit must be at least 1, got \(newValue)")
            withLock { state.limit = newValue; notifyRoomChanged() }
        }
    }

    /// Receives this port's messages on its loop's thread; held weakly, like `NSPort.delegate`.
    ///
    /// Thread-safety: any thread; the delegate is called on the loop's thread only.
    public var delegate: (any MessagePortDelegate)? {
        get { withLock { state.delegate } }
        set { withLock { state.delegate = newValue } }
    }

    /// Sets a closure that receives messages instead of the delegate (the closure wins when both
    /// are set). Pass nil to remove it.
    ///
    /// Thread-safety: any thread; the closure is called on the loop's thread only.
    public func setHandler(_ handler: (@Sendable (MessagePort.Message) -> Void)?) {
        // The old closure is released after the lock: whatever it captured may call back into
        // this port from its `deinit` (invalidate it, send to it), which takes the same lock.
        let old = withLock { () -> (@Sendable (MessagePort.Message) -> Void)? in
            defer { state.handler = handler }
            return state.handler
        }
        withExtendedLifetime(old) {}
    }

    /// False once ``invalidate()`` was called (or the port's loop shut down); for a remote port,
    /// also once its connection ended (see ``setInvalidationHandler(on:_:)``).
    ///
    /// Thread-safety: any thread.
    public var isValid: Bool {
        if let remote { return !gate.isClosed && remote.isValid }
        return !gate.isClosed
    }

    /// The logger to use: the port's own, else `loop`'s, else one that logs nothing. Called
    /// without the port's lock held (a loop's logger is behind the loop's lock).
    func logger(loop: PortRunLoop?) -> Logger {
        ownLogger ?? loop?.currentLogger ?? .portRunLoopDisabled
    }

    public static func == (lhs: MessagePort, rhs: MessagePort) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    public var description: String { "MessagePort(\(ObjectIdentifier(self)), valid: \(isValid))" }
}
