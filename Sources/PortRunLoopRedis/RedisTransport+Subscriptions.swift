import CHiredis
import Foundation
import PortRunLoopBus
import PortRunLoopKit

/// A channel (SUBSCRIBE: one notification name), a pattern (PSUBSCRIBE: every name), or a durable
/// name's stream (XREADGROUP, on the reading connection).
///
/// Thread-safety: a value type.
package enum SubscriptionKey: Hashable, Sendable {
    case channel(String)
    case pattern(String)
    case stream(String)

    /// The token's rule: `SUBSCRIBE <channel>`, `PSUBSCRIBE <pattern>` or `XREADGROUP <key>`.
    package var rule: String {
        switch self {
        case .channel(let channel): "SUBSCRIBE " + channel
        case .pattern(let pattern): "PSUBSCRIBE " + pattern
        case .stream(let key): "XREADGROUP " + key
        }
    }

    package init?(rule: String) {
        if rule.hasPrefix("SUBSCRIBE ") {
            self = .channel(String(rule.dropFirst("SUBSCRIBE ".count)))
        } else if rule.hasPrefix("PSUBSCRIBE ") {
            self = .pattern(String(rule.dropFirst("PSUBSCRIBE ".count)))
        } else if rule.hasPrefix("XREADGROUP ") {
            self = .stream(String(rule.dropFirst("XREADGROUP ".count)))
        } else {
            return nil
        }
    }
}

/// One channel's or pattern's subscription (loop thread): how many observations want it, and its
/// state at the server. At most one (P)SUBSCRIBE or (P)UNSUBSCRIBE is in flight per key, so hiredis'
/// per-channel callback table never sees a subscribe overtake an unsubscribe.
struct SubscriptionState {
    var wanted = 0
    var atServer = false
    var inFlight = false
    var waiters: [LoopWaiter] = []
}

extension RedisTransport {
    /// Subscribes to what observing the name takes (its channel, its stream, or for every name the
    /// pattern and every durable stream), one after the other; the token's rule lists them, one
    /// per line.
    func subscribe(_ subscription: TransportSubscription) throws(BusNotificationError) -> TransportSubscriptionToken {
        let keys: [SubscriptionKey]
        switch subscription {
        case .notifications(let name, _):
            // The object is filtered by the center; the channel or stream is the name's.
            keys = subscriptionKeys(forName: name)
        }
        guard !isClosed else { throw .disconnected }
        for (index, key) in keys.enumerated() {
            do {
                try subscribe(key)
            } catch {
                for done in keys[..<index] { onLoop { $0.unwant(done) } }
                throw error
            }
        }
        return TransportSubscriptionToken(rule: keys.map(\.rule).joined(separator: "\n"))
    }

    private func subscribe(_ key: SubscriptionKey) throws(BusNotificationError) {
        let waiter = makeWaiter()
        guard onLoop({ $0.want(key, waiter) }) else { throw .disconnected }
        switch waiter.wait(timeout: callTimeout) {
        case .success?:
            return
        case .failure(let error)?:
            onLoop { $0.unwant(key) }
            throw error
        case nil:
            onLoop { $0.unwant(key) }
            throw .timedOut
        }
    }

    func subscriptionRegistered(_ token: TransportSubscriptionToken) {
        for rule in token.rule.split(separator: "\n") {
            guard case .stream(let key)? = SubscriptionKey(rule: String(rule)) else { continue }
            onLoop { $0.observeStream(key, by: 1) }
        }
    }

    func unsubscribe(_ token: TransportSubscriptionToken) {
        for rule in token.rule.split(separator: "\n") {
            guard let key = SubscriptionKey(rule: String(rule)) else { continue }
            onLoop { transport in
                if case .stream(let stream) = key { transport.observeStream(stream, by: -1) }
                transport.unwant(key)
            }
        }
    }

    /// One more observation wants `key` (loop thread); `waiter` hears when it is in effect.
    private func want(_ key: SubscriptionKey, _ waiter: LoopWaiter) {
        if case .stream(let stream) = key {
            wantStream(stream, waiter)
            return
        }
        let state = loopState
        state.subscriptions[key, default: SubscriptionState()].wanted += 1
        guard state.ready else {
            // Nothing can be confirmed while the connection is down: the caller gets the error now
            // (and withdraws the want).
            waiter.finish(.failure(.disconnected))
            return
        }
        if let entry = state.subscriptions[key], entry.atServer, !entry.inFlight {
            // (With a command in flight while subscribed, it is an UNSUBSCRIBE: wait for it and the
            // SUBSCRIBE that follows.)
            waiter.finish(.success(()))
        } else {
            state.subscriptions[key]?.waiters.append(waiter)
        }
        reconcile(key)
    }

    /// One observation less (loop thread).
    func unwant(_ key: SubscriptionKey) {
        if case .stream(let stream) = key {
            unwantStream(stream)
            return
        }
        guard var entry = loopState.subscriptions[key], entry.wanted > 0 else { return }
        entry.wanted -= 1
        loopState.subscriptions[key] = entry
        reconcile(key)
    }

    /// Brings `key`'s state at the server towards what is wanted: one command at a time.
    func reconcile(_ key: SubscriptionKey) {
        let state = loopState
        guard let entry = state.subscriptions[key] else { return }
        if entry.wanted == 0, !entry.atServer, !entry.inFlight {
            state.subscriptions[key] = nil
            if state.restoring.remove(key) != nil { checkReady() }
            return
        }
        guard !entry.inFlight, let subscriber = state.subscriber, subscriber.isOpen else { return }
        let command: String
        switch (key, entry.wanted > 0, entry.atServer) {
        case (.channel, true, false): command = "SUBSCRIBE"
        case (.pattern, true, false): command = "PSUBSCRIBE"
        case (.channel, false, true): command = "UNSUBSCRIBE"
        case (.pattern, false, true): command = "PUNSUBSCRIBE"
        default: return
        }
        let name: String
        switch key {
        case .channel(let channel): name = channel
        case .pattern(let pattern): name = pattern
        case .stream: return
        }
        if subscriber.send([Array(command.utf8), Array(name.utf8)]) {
            state.subscriptions[key]?.inFlight = true
        }
    }

    /// The server confirmed a (p)subscribe or (p)unsubscribe of `key` (loop thread, inside hiredis).
    private func confirmed(_ key: SubscriptionKey, subscribed: Bool) {
        let state = loopState
        guard var entry = state.subscriptions[key] else { return }
        entry.inFlight = false
        entry.atServer = subscribed
        let waiters = subscribed ? entry.waiters : []
        if subscribed { entry.waiters.removeAll() }
        state.subscriptions[key] = entry
        if subscribed { shared.withLock { $0.metrics.subscriptionsConfirmed += 1 } }
        for waiter in waiters { waiter.finish(.success(())) }
        let restored = subscribed && state.restoring.remove(key) != nil
        reconcile(key)
        if restored { checkReady() }
    }

    /// Fails every caller waiting for a subscription (the connection is gone), or those of `keys`.
    func failSubscriptionWaiters(of keys: [SubscriptionKey]? = nil, with error: BusNotificationError) {
        let state = loopState
        if keys == nil {
            for waiter in state.durable.takeWaiters() { waiter.finish(.failure(error)) }
        }
        for key in keys ?? Array(state.subscriptions.keys) {
            let waiters = state.subscriptions[key]?.waiters ?? []
            state.subscriptions[key]?.waiters.removeAll()
            for waiter in waiters { waiter.finish(.failure(error)) }
        }
    }

    // MARK: Receiving

    /// A reply or push on the subscribed connection (loop thread, inside hiredis): confirmations
    /// are applied at once; messages are decoded straight from hiredis' reply (the envelope
    /// observers receive, or why it is malformed) into the inbox for the drain.
    func subscriberReceived(_ connection: RedisConnection, _ reply: redisReply) {
        switch RedisPush(reply) {
        case .message(let channel, let payload):
            receive(channel: channel, payload: payload)
        case .patternMessage(let channel, let payload):
            // The server sent this message to the channel's own subscription just before: once is enough.
            let channelName = String(decoding: channel, as: UTF8.self)
            if loopState.subscriptions[.channel(channelName)]?.atServer == true { return }
            receive(channel: channel, payload: payload)
        case .unreadable(let kind):
            receivedUnreadable(kind: kind)
        case .confirmation(let key, let subscribed):
            connection.noteReply()
            if let key { confirmed(key, subscribed: subscribed) }
        case .refused(let text):
            connection.noteReply()
            logger.warning("Redis refused a subscription", metadata: [BusLogKey.error: "\(text)"])
        case .other:
            break
        }
    }

    /// A `message` or `pmessage` push without a readable channel or payload: counted with the
    /// malformed messages, and logged with them by the drain.
    private func receivedUnreadable(kind: String) {
        loopState.inbox.append(.malformed(channel: "?", reason: .unreadablePush(kind: kind)))
    }

    /// Decodes one message into the inbox (loop thread, inside hiredis: the bytes are valid until
    /// it returns).
    private func receive(channel: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer) {
        switch RedisWireFormat.envelope(channel: channel, payload: payload, names: &loopState.channelNames) {
        case .success(let envelope):
            loopState.inbox.append(.notification(envelope))
        case .failure(let reason):
            loopState.inbox.append(.malformed(channel: String(decoding: channel, as: UTF8.self), reason: reason))
        }
    }

    /// Queues one drain of the inbox in the common modes (not in the private waiting mode: a
    /// caller waiting on the loop's thread for the server does not get notifications meanwhile).
    func scheduleDrain() {
        let state = loopState
        guard !state.inbox.isEmpty, !state.drainScheduled else { return }
        state.drainScheduled = true
        loop.perform { [self] in drain() }
    }

    /// Delivers what the inbox holds, in arrival order (loop thread, outside hiredis' calls).
    func drain() {
        let state = loopState
        state.drainScheduled = false
        // What a durable read delivered is acknowledged once delivered, and the next read sent.
        defer { if loopState.reader != nil { acknowledgeAndContinue() } }
        var messages: [IncomingMessage?] = []
        swap(&messages, &state.spareInbox) // uniquely referenced, so the inbox appends in place
        swap(&messages, &state.inbox)
        defer {
            messages.removeAll(keepingCapacity: true)
            state.spareInbox = messages
        }
        guard !messages.isEmpty, !isClosed else { return }
        // Counted before delivery: an observer that sees a notification sees the counts of
        // everything read before it.
        var malformed = 0
        for case .malformed? in messages { malformed += 1 }
        shared.withLock { shared in
            shared.metrics.received += messages.count
            shared.metrics.malformed += malformed
        }
        let delegate = delegate
        // Each message is moved out of its slot and its envelope handed over to the center: no
        // copy of it, and emptying the batch then releases nothing.
        for index in messages.indices {
            switch messages[index].take() {
            case nil:
                continue
            case .notification(let envelope):
                delegate?.transportReceived(envelope)
            case .malformed(let channel, let reason):
                delegate?.transportDroppedMalformed(from: "Redis channel \(channel)", reason: "\(reason)")
            }
        }
    }
}

extension BusNotificationError {
    /// A Redis error reply, `CODE message` (`NOPERM this user has no permissions…`), as
    /// ``BusNotificationError/busError(name:message:)``.
    init(serverError text: String) {
        let parts = text.split(separator: " ", maxSplits: 1)
        self = .busError(name: parts.first.map(String.init) ?? "ERR", message: parts.count > 1 ? String(parts[1]) : "")
    }
}
