@_spi(Transport) import PortRunLoopDBus
import PortRunLoopKit

/// The token for one observation of a Redis center's connection state
/// (``PortRunLoopDBus/BusNotificationCenter/addRedisStateObserver(on:using:)``): the handler gets
/// the current state at once (queued), then each change, on its loop's thread, in order. Ends on
/// ``remove()`` or when the token is released.
///
/// Thread-safety: `Sendable`; every member is safe from any thread.
public final class RedisStateObservation: Sendable {
    private let loop: PortRunLoop
    private let handler: @Sendable (RedisConnectionState) -> Void
    private let owner: Locked<WeakReference<RedisTransport>>
    private let active = Locked(true)

    init(loop: PortRunLoop, transport: RedisTransport, handler: @escaping @Sendable (RedisConnectionState) -> Void) {
        self.loop = loop
        self.handler = handler
        self.owner = Locked(WeakReference(object: transport))
    }

    deinit { remove() }

    /// Ends the observation: no handler call starts after this returns (one already running may
    /// finish). Idempotent.
    ///
    /// Thread-safety: any thread.
    public func remove() {
        active.withLock { $0 = false }
        let transport = owner.withLock { $0.object }
        transport?.removeStateObserver(self)
    }

    /// Queues the handler with `state` on the observation's loop. A loop that has shut down refuses
    /// it and could never call the handler again: the observation ends.
    func deliver(_ state: RedisConnectionState) {
        let queued = loop.perform { [self] in
            guard active.withLock({ $0 }) else { return }
            handler(state)
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
