import Logging
import PortRunLoopBus
import PortRunLoopKit

/// Finding the master through Redis Sentinel (loop thread; endpoints with
/// ``RedisEndpoint/sentinels``).
///
/// Each connection attempt asks the sentinels for the master (``SentinelDiscovery``), reporting
/// ``RedisConnectionState/askingSentinel(_:)`` per sentinel and
/// ``RedisConnectionState/masterFound(_:)`` with the answer, then opens both connections to it;
/// each checks `ROLE` in its handshake, so a replica named as master (a sentinel's stale answer)
/// is a failed attempt, and the next attempt asks the next sentinel first. Once a sentinel has
/// named the master, one stays subscribed to `+switch-master` (``SentinelWatch``): an
/// announcement of a new master ends the connections to the old one (if up), cancels a search
/// under way, and connects to the new one at once (``RedisConnectionState/masterChanged(_:)``).
/// A lost master is looked for again through the sentinels, never at its old address.
extension RedisTransport {
    func connectThroughSentinels(_ sentinels: RedisSentinels) {
        let state = loopState
        guard state.discovery == nil else { return }
        if let master = state.announcedMaster {
            state.announcedMaster = nil
            state.master = master
            setState(.masterChanged(master))
            openConnections(to: master)
            return
        }
        let discovery = SentinelDiscovery(
            loop: loop, endpoint: endpoint, sentinels: sentinels, first: state.firstSentinel, logger: logger, modes: Self.modes,
            asking: { [weak self] sentinel in self?.askingSentinel(sentinel) },
            finished: { [weak self] outcome in self?.discoveryFinished(outcome, sentinels: sentinels) })
        state.discovery = discovery
        discovery.start()
    }

    private func askingSentinel(_ sentinel: RedisSentinels.Address) {
        logger.info("Asking a Redis sentinel for the master", metadata: [
            BusLogKey.endpoint: "\(endpoint)", RedisLogKey.sentinel: "\(sentinel)",
        ])
        setState(.askingSentinel(sentinel))
    }

    private func discoveryFinished(_ outcome: SentinelDiscovery.Outcome, sentinels: RedisSentinels) {
        let state = loopState
        state.discovery = nil
        guard !isClosed else { return }
        switch outcome {
        case .found(let master, let sentinel):
            state.firstSentinel = sentinel
            state.master = master
            logger.info("Redis sentinel named the master", metadata: [
                BusLogKey.endpoint: "\(endpoint)", RedisLogKey.sentinel: "\(sentinels.addresses[sentinel])", RedisLogKey.master: "\(master)",
            ])
            setState(.masterFound(master))
            if state.watch == nil {
                let watch = SentinelWatch(loop: loop, endpoint: endpoint, sentinels: sentinels, first: sentinel, logger: logger,
                                          modes: Self.modes) { [weak self] master in self?.masterSwitched(to: master) }
                state.watch = watch
                watch.start()
            }
            openConnections(to: master)
        case .failed(let reason):
            logger.warning("No Redis sentinel named the master", metadata: [BusLogKey.endpoint: "\(endpoint)", BusLogKey.reason: "\(reason)"])
            attemptFailed(reason)
        }
    }

    /// A connection attempt failed before any connection was made (no sentinel named the master).
    private func attemptFailed(_ reason: String) {
        let state = loopState
        shared.withLock { $0.metrics.failedAttempts += 1 }
        setState(.disconnected(reason))
        if !state.everReady {
            for waiter in state.startWaiters { waiter.finish(.failure(.connectionFailed("\(endpoint): \(reason)"))) }
            state.startWaiters.removeAll()
        }
        scheduleReconnect()
    }

    /// A sentinel announced that the master moved to `master` (from a queued block).
    private func masterSwitched(to master: RedisSentinels.Address) {
        let state = loopState
        guard !isClosed else { return }
        logger.notice("Redis sentinel announced a new master", metadata: [
            BusLogKey.endpoint: "\(endpoint)", RedisLogKey.master: "\(master)",
        ])
        // Already there, or on the way (a search found it first).
        if state.master == master, state.publisher != nil { return }
        state.announcedMaster = master
        state.discovery?.cancel()
        state.discovery = nil
        if let publisher = state.publisher {
            // Its end ends the subscriber too, and reconnects at once (``scheduleReconnect()``).
            publisher.drop("the master moved to \(master) (switch-master)")
            return
        }
        state.reconnectTimer?.invalidate()
        state.reconnectTimer = nil
        connect()
    }
}
