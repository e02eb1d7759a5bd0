import PortRunLoopBus
import PortRunLoopKit

/// The token for one observation of a Redis center's connection state
/// (``PortRunLoopBus/BusNotificationCenter/addRedisStateObserver(on:using:)``): the handler gets
/// the current state at once (queued), then each change, on its loop's thread, in order. Ends on
/// ``remove()`` or when the token is released.
///
/// In order: every state carries the transport's version of it, and a delivery older than one
/// the handler already got is skipped. Two changes made at once on two threads (a `close()` as the
/// loop loses the connection) may be queued in either order; the handler then sees the later one
/// only, never the earlier one after it, and always ends on the center's current state.
///
/// Thread-safety: `Sendable`; every member is safe from any thread.
public final class RedisStateObservation: Sendable {
    private let loop: PortRunLoop
    private let handler: @Sendable (RedisConnectionState) -> Void
    private let owner: TracedMutex<WeakReference<RedisTransport>>
    /// Whether the observation is on, and the version of the last state the handler got.
    private let gate = TracedMutex((active: true, delivered: UInt64(0)))

    init(loop: PortRunLoop, transport: RedisTransport, handler: @escaping @Sendable (RedisConnectionState) -> Void) {
        self.loop = loop
        self.handler = handler
        self.owner = TracedMutex(WeakReference(object: transport))
    }

    deinit { remove() }

    /// Ends the observation: no handler call starts after this returns (one already running may
    /// finish). Idempotent.
    ///
    /// Thread-safety: any thread.
    public func remove() {
        gate.withLock { $0.active = false }
        let transport = owner.withLock { $0.object }
        transport?.removeStateObserver(self)
    }

    /// Queues the handler with `state`, the transport's `version` of it, on the observation's loop;
    /// it is skipped there when a later version was delivered first. A loop that has shut down
    /// refuses it and could never call the handler again: the observation ends.
    func deliver(_ state: RedisConnectionState, version: UInt64) {
        let queued = loop.perform { [self] in
            let current = gate.withLock { gate -> Bool in
                guard gate.active, version > gate.delivered else { return false }
                gate.delivered = version
                return true
            }
            if current { handler(state) }
        }
        if !queued { remove() }
    }
}

/// A weak reference: a state observation's to its transport, and the transport's table's to its
/// observations (neither keeps the other alive).
///
/// Thread-safety: used under a lock.
struct WeakReference<Object: AnyObject> {
    weak var object: Object?
}
