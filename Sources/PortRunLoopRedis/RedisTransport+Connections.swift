import CHiredis
import Foundation
import PortRunLoopBus
import PortRunLoopKit

/// Opening, losing and reopening the two connections (loop thread).
///
/// The transport is *ready* when both connections are up and every subscription is confirmed
/// again; only then are posts published directly (kept posts first, in order) and a recovery
/// reported. Either connection ending ends the other (one outage, one report), and a reconnection
/// is scheduled after the back-off delay.
extension RedisTransport: RedisConnectionOwner {
    /// Opens both connections (a new pair each time), to the endpoint's server, or to the master
    /// the sentinels name (RedisTransport+Sentinel.swift).
    func connect() {
        let state = loopState
        guard !isClosed, state.publisher == nil, state.subscriber == nil, state.reader == nil else { return }
        state.reconnectTimer = nil
        if let sentinels = endpoint.sentinels {
            connectThroughSentinels(sentinels)
        } else {
            openConnections(to: nil)
        }
    }

    /// Opens both connections to `master` (checking its `ROLE`), or to the endpoint's server.
    func openConnections(to master: RedisSentinels.Address?) {
        let state = loopState
        state.subscriberSetUp = false
        let target = master.map {
            RedisConnectionTarget(host: $0.host, port: $0.port, username: endpoint.username, password: endpoint.password, checksRole: true)
        }
        let publisher = RedisConnection(loop: loop, endpoint: endpoint, target: target, label: "publisher", logger: logger,
                                        modes: Self.modes, readsRepliesInBatches: true, healthCheck: Self.publisherHealthCheck)
        let subscriber = RedisConnection(loop: loop, endpoint: endpoint, target: target, label: "subscriber", logger: logger,
                                         modes: Self.modes, healthCheck: [Array("SUBSCRIBE".utf8), Array(healthChannel.utf8)])
        publisher.owner = self
        subscriber.owner = self
        state.publisher = publisher
        state.subscriber = subscriber
        if endpoint.durable != nil {
            // No health check: it is always reading (a blocking read answers within its BLOCK).
            let reader = RedisConnection(loop: loop, endpoint: endpoint, target: target, label: "reader", logger: logger,
                                         modes: Self.modes, healthCheck: nil)
            reader.owner = self
            state.reader = reader
            reader.open()
        }
        publisher.open()
        subscriber.open()
    }

    func connectionOpened(_ connection: RedisConnection) {
        let state = loopState
        guard !isClosed else { return }
        if connection === state.subscriber {
            // A new subscribed connection has no subscription: restore every one still wanted.
            state.restoring.removeAll()
            state.subscriberSetUp = true
            for key in Array(state.subscriptions.keys) {
                state.subscriptions[key]?.atServer = false
                state.subscriptions[key]?.inFlight = false
                if (state.subscriptions[key]?.wanted ?? 0) > 0 { state.restoring.insert(key) }
                reconcile(key)
            }
        } else if connection === state.reader {
            state.durable.connectionOpened()
            continueReading()
        } else if connection !== state.publisher {
            return
        }
        checkReady()
    }

    /// Becomes ready when both connections are up and nothing is being restored.
    func checkReady() {
        let state = loopState
        guard !state.ready, !isClosed, let publisher = state.publisher, publisher.isOpen,
              let subscriber = state.subscriber, subscriber.isOpen, state.subscriberSetUp, state.restoring.isEmpty,
              endpoint.durable == nil || state.reader?.isOpen == true else { return }
        state.ready = true
        state.everReady = true
        state.readySince = .now
        state.dropReported = false
        let kept = state.buffered
        state.buffered.removeAll()
        send(kept)
        let recovered = state.lossReported
        state.lossReported = false
        shared.withLock { shared in
            shared.metrics.bufferedWhileDisconnected = 0
            if recovered { shared.metrics.reconnections += 1 }
        }
        setState(.connected)
        for waiter in state.startWaiters { waiter.finish(.success(())) }
        state.startWaiters.removeAll()
        if recovered {
            logger.notice("Redis connection restored", metadata: [BusLogKey.endpoint: "\(endpoint)", RedisLogKey.resent: "\(kept.count)"])
            delegate?.transportReconnected()
        }
    }

    func connectionEnded(_ connection: RedisConnection, reason connectionReason: String, wasOpen: Bool) {
        countConfirmed()
        let state = loopState
        let isPublisher = connection === state.publisher
        let isSubscriber = connection === state.subscriber
        guard isPublisher || isSubscriber || connection === state.reader else { return } // already handled
        // A master the sentinels named: the reason says which, and the next search starts at the
        // sentinel after the one that named it, should it have been wrong.
        let reason = endpoint.sentinels == nil ? connectionReason : "\(connection.target.address): \(connectionReason)"
        guard !isClosed else {
            // Closed: no reconnection, and the other connection ends on its own (a publisher
            // closing after its replies still writes and reads what was handed to it). Posts
            // still unanswered (a close on a loop that had shut down frees the connection without
            // waiting for them) are counted all the same.
            if isPublisher { state.publisher = nil } else if isSubscriber { state.subscriber = nil } else { state.reader = nil }
            let unconfirmed = isPublisher ? unansweredPosts(connection) : 0
            if unconfirmed > 0 { shared.withLock { $0.metrics.unconfirmedAtDisconnect += unconfirmed } }
            return
        }
        // One outage: forget every connection now and end the others too.
        let others = [state.publisher, state.subscriber, state.reader].compactMap { $0 }.filter { $0 !== connection }
        let publisher = state.publisher
        state.publisher = nil
        state.subscriber = nil
        state.reader = nil
        let unconfirmed = publisher.map(unansweredPosts) ?? 0
        for other in others { other.drop("the other connection ended (\(reason))") }

        let wasReady = state.ready
        state.ready = false
        state.subscriberSetUp = false
        state.restoring.removeAll()
        // A subscribed connection the server ended with an error reply refused a subscription in
        // flight: its callers hear the server's error, the others that the connection went.
        let refusal = !isSubscriber ? nil : connection.refusedByServer.map(BusNotificationError.init(serverError:))
        let refusedKeys = refusal == nil ? [] : state.subscriptions.filter { $0.value.inFlight }.map(\.key)
        for key in Array(state.subscriptions.keys) {
            state.subscriptions[key]?.atServer = false
            state.subscriptions[key]?.inFlight = false
        }
        if let refusal { failSubscriptionWaiters(of: refusedKeys, with: refusal) }
        failSubscriptionWaiters(with: .disconnected)
        for waiter in state.flushWaiters { waiter.finish(.failure(.disconnected)) }
        state.flushWaiters.removeAll()
        shared.withLock { shared in
            shared.metrics.unconfirmedAtDisconnect += unconfirmed
            if wasReady { shared.metrics.connectionLosses += 1 } else { shared.metrics.failedAttempts += 1 }
        }
        setState(.disconnected(reason))
        if !state.everReady {
            for waiter in state.startWaiters { waiter.finish(.failure(.connectionFailed("\(endpoint): \(reason)"))) }
            state.startWaiters.removeAll()
        }
        // Back to the initial delay only after a connection that lasted: a server that accepts
        // and then closes at once (too many clients, protected mode) meets a growing back-off,
        // not an attempt every initial delay.
        if wasReady, let since = state.readySince, ContinuousClock.now - since >= RedisReconnectPolicy.healthyAfter {
            state.reconnectDelay = endpoint.reconnectPolicy.initialDelay
        }
        state.readySince = nil
        if !wasReady, let sentinels = endpoint.sentinels {
            state.firstSentinel = (state.firstSentinel + 1) % sentinels.addresses.count
            logger.info("Redis master named by a sentinel could not be used", metadata: [
                BusLogKey.endpoint: "\(endpoint)", RedisLogKey.master: "\(connection.target.address)", BusLogKey.reason: "\(connectionReason)",
            ])
        }
        if wasReady {
            state.lossReported = true
            logger.error("Redis connection lost; reconnecting", metadata: [
                BusLogKey.endpoint: "\(endpoint)", BusLogKey.reason: "\(reason)", RedisLogKey.unconfirmed: "\(unconfirmed)",
            ])
            delegate?.transportDisconnected()
        }
        scheduleReconnect()
    }

    /// The publishing connection's health check: `PING <text>`, answered with the text as a bulk
    /// string (a flush's bare `PING` is answered `+PONG`, a `PUBLISH` with an integer).
    static let publisherHealthCheck: [[UInt8]] = [Array("PING".utf8), Array("portrunloop.health".utf8)]

    /// The subscribed connection's health check subscribes (again) to this channel, on which nothing
    /// is published: a subscribed Redis connection answers only (un)subscriptions and `PING`, and
    /// hiredis 0.14 keeps a `PING`'s callback for ever on a subscribed context. Outside the
    /// notification prefix, so no observation sees it.
    var healthChannel: String { "portrunloop.health." + (localName ?? "?") }

    func connectionSentHealthCheck(_ connection: RedisConnection) {
        shared.withLock { $0.metrics.healthChecks += 1 }
    }

    /// Posts the publishing connection sent that the server has not answered: the replies it
    /// awaits, but for a health check's and the waiting flushes' `PING`s (one each).
    private func unansweredPosts(_ publisher: RedisConnection) -> Int {
        max(0, publisher.awaitingCommandReplies - loopState.flushWaiters.count)
    }

    /// Reconnects after the back-off delay, or at once to a master a sentinel announced.
    func scheduleReconnect() {
        let state = loopState
        var delay = Duration.zero
        if state.announcedMaster == nil {
            delay = state.reconnectDelay
            state.reconnectDelay = endpoint.reconnectPolicy.next(after: delay)
        }
        let timer = RunLoopTimer(after: delay.seconds) { [weak self] _ in self?.connect() }
        state.reconnectTimer = timer
        for mode in Self.modes { loop.add(timer, forMode: mode) }
    }

    // MARK: Replies

    func connection(_ connection: RedisConnection, received reply: UnsafeMutablePointer<redisReply>?) {
        guard let reply else { return } // abandoned: the context is being freed
        if connection === loopState.publisher {
            publisherReplied(connection, reply.pointee)
        } else if connection === loopState.subscriber {
            subscriberReceived(connection, reply.pointee)
        } else if connection === loopState.reader {
            readerReceived(connection, reply.pointee)
        }
    }

    /// hiredis' read returned: what it decoded is delivered now when the loop runs a common mode
    /// (a short round trip: no queued block in between), or from a queued block otherwise (a
    /// caller waiting on the loop's thread for the server, in the private mode, gets nothing).
    /// The publisher's replies waiting below its low-water mark are read here, after each read of
    /// the subscriber (see ``RedisConnection``): a post's round trip wakes the loop for the answer
    /// only.
    func connectionFinishedReading(_ connection: RedisConnection) {
        let state = loopState
        if connection === state.subscriber || connection === state.reader { state.publisher?.readWaitingReplies() }
        countConfirmed()
        guard !loopState.inbox.isEmpty else {
            if connection === state.reader { acknowledgeAndContinue() }
            return
        }
        if loop.currentMode != Self.waitMode {
            if connection === state.reader { readAheadIfBehind() }
            drain()
        } else {
            scheduleDrain()
        }
    }

    /// Adds the PUBLISH replies read since the last count to the metrics.
    private func countConfirmed() {
        let confirmed = loopState.confirmedUncounted
        guard confirmed > 0 else { return }
        loopState.confirmedUncounted = 0
        shared.withLock { $0.metrics.publishConfirmed += confirmed }
    }

    private func publisherReplied(_ connection: RedisConnection, _ reply: redisReply) {
        connection.noteReply()
        if reply.type == REDIS_REPLY_INTEGER {
            // Counted per read, not per reply (``connectionFinishedReading(_:)``).
            loopState.confirmedUncounted += 1
            return
        }
        if reply.type == REDIS_REPLY_STATUS, RedisReply.string(reply) == "PONG" {
            // A flush's PING: every PUBLISH sent before it has been answered (and is counted).
            countConfirmed()
            if !loopState.flushWaiters.isEmpty { loopState.flushWaiters.removeFirst().finish(.success(())) }
            if loopState.flushWaiters.isEmpty { connection.setRepliesWanted(false) }
            return
        }
        if reply.type == REDIS_REPLY_STRING {
            // The health check's answer (``publisherHealthCheck``), or an XADD's entry ID.
            if let bytes = RedisReply.bytes(reply), !RedisReply.equals(bytes, "portrunloop.health") { loopState.confirmedUncounted += 1 }
            return
        }
        if reply.type == REDIS_REPLY_ERROR {
            let message = RedisReply.string(reply) ?? "error"
            shared.withLock { $0.metrics.publishErrors += 1 }
            logger.warning("Redis refused a PUBLISH", metadata: [BusLogKey.endpoint: "\(endpoint)", BusLogKey.error: "\(message)"])
        } else {
            shared.withLock { $0.metrics.publishConfirmed += 1 }
        }
    }
}

/// Reading hiredis replies (inside hiredis' callbacks: copied out at once).
///
/// Thread-safety: a stateless namespace.
enum RedisReply {
    static func string(_ reply: redisReply) -> String? {
        guard reply.type == REDIS_REPLY_STRING || reply.type == REDIS_REPLY_STATUS || reply.type == REDIS_REPLY_ERROR,
              let text = reply.str else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: text, count: reply.len), as: UTF8.self)
    }

    /// The bytes of a string reply (valid while hiredis holds the reply).
    static func bytes(_ reply: redisReply) -> UnsafeRawBufferPointer? {
        guard reply.type == REDIS_REPLY_STRING, let text = reply.str else { return nil }
        return UnsafeRawBufferPointer(start: text, count: reply.len)
    }

    /// Whether `bytes` are `text`'s.
    static func equals(_ bytes: UnsafeRawBufferPointer, _ text: StaticString) -> Bool {
        guard bytes.count == text.utf8CodeUnitCount else { return false }
        guard let base = bytes.baseAddress else { return true }
        return memcmp(base, text.utf8Start, bytes.count) == 0
    }
}
