import Foundation
import Logging
import PortRunLoopBus
import PortRunLoopKit

extension BusNotificationCenter {
    /// A center whose notifications travel over Redis pub/sub (<doc:RedisNotifications>), so
    /// processes on many hosts observe each other's posts; the API is the D-Bus center's, except
    /// that PortRunLoopDBus's `addSignalObserver(matching:on:using:)` throws
    /// `BusNotificationError.invalidMatchRule(_:)` (D-Bus signals only).
    ///
    /// Connects two TCP connections (publishing, subscribed) run by `loop` on its thread — no thread
    /// of its own — and waits for them: at most the endpoint's connect timeout plus `callTimeout`
    /// (from `loop`'s own thread the wait runs the loop, in a private mode). Later losses are not
    /// errors: the center reconnects with back-off and restores its subscriptions
    /// (``redisState``, ``addRedisStateObserver(on:using:)``, `addDisconnectionObserver(on:using:)`).
    ///
    /// - Parameters:
    ///   - endpoint: the server, timeouts, reconnection policy and post buffer.
    ///   - loop: the loop that runs the connections (default: `PortRunLoop.main`); it must run
    ///     (from another thread than its own, it must be running for this call to succeed).
    ///   - logger: the center's `logger`; the default logs nothing.
    ///   - heldNotificationLimit: the center's `heldNotificationLimit`; at least 1.
    ///   - callTimeout: the center's `callTimeout`; positive. It bounds adding an observation (the
    ///     server's SUBSCRIBE confirmation).
    ///
    /// The first Redis center sets SIGPIPE to ignored if it still has its default action, so that a
    /// write to a connection the server closed is a reported loss, not the end of the process
    /// (<doc:RedisNotifications>, "Operations").
    ///
    /// - Throws: `BusNotificationError.connectionFailed(_:)` when the server refuses the
    ///   connection or the credentials (its reason, e.g. `WRONGPASS` or `NOAUTH`, in the message),
    ///   is absent, or does not answer in time; nothing is left running then. An endpoint with a
    ///   username and no password is a precondition failure, and so is a reconnection policy
    ///   whose delays are not `0 < initialDelay <= maximumDelay`.
    ///
    /// Thread-safety: any thread.
    public convenience init(redis endpoint: RedisEndpoint, loop: PortRunLoop = .main,
                            logger: Logger = BusNotificationCenter.disabledLogger,
                            heldNotificationLimit: Int = BusNotificationCenter.defaultHeldNotificationLimit,
                            callTimeout: Duration = .seconds(5)) throws(BusNotificationError) {
        RedisEndpoint.check(username: endpoint.username, password: endpoint.password)
        RedisReconnectPolicy.check(initialDelay: endpoint.reconnectPolicy.initialDelay, maximumDelay: endpoint.reconnectPolicy.maximumDelay)
        let transport = RedisTransport(endpoint: endpoint, loop: loop, logger: logger, callTimeout: callTimeout)
        self.init(transport: transport, endpoint: .transport(endpoint.description), logger: logger,
                  heldNotificationLimit: heldNotificationLimit, callTimeout: callTimeout)
        do {
            try transport.waitUntilConnected()
        } catch {
            close()
            throw error
        }
    }

    /// Waits until the Redis server has answered every post this center made before the call (so
    /// they are published: call it before exiting a program that must not lose its last posts),
    /// at most `timeout`. A D-Bus center returns at once.
    ///
    /// Posts are otherwise sent asynchronously; `close()` also lets the ones already handed to
    /// the connection go out, if the center's `loop` keeps running.
    ///
    /// - Throws: `BusNotificationError.disconnected` when the connection is down or lost meanwhile
    ///   (posts kept while disconnected are sent once it is back; this call does not wait for that),
    ///   `BusNotificationError.timedOut`.
    ///
    /// Thread-safety: any thread (from `loop`'s own thread the wait runs the loop in a private mode).
    public func flushRedisPosts(timeout: Duration = .seconds(5)) throws(BusNotificationError) {
        guard let transport = transport as? RedisTransport else { return }
        try transport.flush(timeout: timeout)
    }

    /// The Redis connection's state; nil for a D-Bus center.
    ///
    /// Thread-safety: any thread.
    public var redisState: RedisConnectionState? { (transport as? RedisTransport)?.connectionState }

    /// The Redis transport's counts; nil for a D-Bus center.
    ///
    /// Thread-safety: any thread.
    public var redisMetrics: RedisTransportMetrics? { (transport as? RedisTransport)?.metrics }

    /// Calls `handler` on `loop`'s thread with the Redis connection's state now (queued), then at
    /// each change (connected, disconnected with the reason, closed), in order: two changes made at
    /// once on two threads may reach it as the later one only, never the earlier after it, so the
    /// last state it gets is the center's current one. Nil for a D-Bus center. Keep the token:
    /// releasing it ends the observation.
    ///
    /// Thread-safety: any thread.
    public func addRedisStateObserver(on loop: PortRunLoop = .main,
                                      using handler: @escaping @Sendable (RedisConnectionState) -> Void) -> RedisStateObservation? {
        guard let transport = transport as? RedisTransport else { return nil }
        let observation = RedisStateObservation(loop: loop, transport: transport, handler: handler)
        transport.addStateObserver(observation)
        return observation
    }
}
