import CHiredis
import Foundation
import PortRunLoopBus
import PortRunLoopKit

/// Durable notifications (loop thread; endpoints with ``RedisEndpoint/durable``): the reading
/// connection's group creations, retention checks, reads and acknowledgements
/// (``DurableStreams``). Posting a durable name is an `XADD` on the publishing connection
/// (``PendingPublish``); its reply is counted as a `PUBLISH`'s.
///
/// An observation of a durable name waits for its group (`XGROUP CREATE … MKSTREAM`, `BUSYGROUP`
/// meaning it exists), then the stream is read with the others. What a read returns is decoded
/// into the inbox with the subscribed connection's messages and delivered by the same drain;
/// after that drain the delivered IDs are acknowledged and the next read is sent. A read that came
/// back full (``RedisDurableNotifications/readCount`` entries of a stream: more are waiting) is
/// followed by the next one at once, without `BLOCK`, before its entries are delivered
/// (``DurableStreams/behind``): Redis reads the next batch while this process delivers the last,
/// and the `XACK`s sent after the drain wait behind a read that returns at once, never behind a
/// blocked one.
extension RedisTransport {
    /// The subscription keys for observing `name` (nil: every name, durable ones included).
    func subscriptionKeys(forName name: String?) -> [SubscriptionKey] {
        guard let name else {
            let streams = (endpoint.durable?.names ?? []).sorted().map { SubscriptionKey.stream(RedisChannelNaming.channel(for: $0)) }
            return [.pattern(RedisChannelNaming.anyNamePattern)] + streams
        }
        if endpoint.durable?.names.contains(name) == true { return [.stream(RedisChannelNaming.channel(for: name))] }
        return [.channel(RedisChannelNaming.channel(for: name))]
    }

    /// One more observation wants the stream `key` (loop thread); `waiter` hears when its group
    /// exists.
    func wantStream(_ key: String, _ waiter: LoopWaiter) {
        let durable = loopState.durable
        durable.streams[key, default: DurableStreams.Stream()].wanted += 1
        guard loopState.ready else {
            waiter.finish(.failure(.disconnected))
            return
        }
        if durable.streams[key]?.groupReady == true {
            waiter.finish(.success(()))
        } else {
            durable.streams[key]?.waiters.append(waiter)
        }
        continueReading()
    }

    /// One observation less wants the stream `key`'s group (loop thread).
    func unwantStream(_ key: String) {
        guard let stream = loopState.durable.streams[key], stream.wanted > 0 else { return }
        loopState.durable.streams[key]?.wanted -= 1
    }

    /// The center registered (`delta` 1) or ended (-1) an observation of the stream `key` (loop
    /// thread). Observed by none, it is no longer read: its entries wait in the group, and its
    /// pending ones are read first when it is observed again.
    func observeStream(_ key: String, by delta: Int) {
        guard var stream = loopState.durable.streams[key] else { return }
        stream.observing = max(0, stream.observing + delta)
        if stream.observing == 0 {
            stream.readsPending = true
            stream.pendingCursor = .zero
        }
        loopState.durable.streams[key] = stream
        continueReading()
    }

    /// Sends what the reading connection has to do next (loop thread, outside hiredis' calls):
    /// the groups wanted and not created, the retention checks, then one read if none is in flight.
    /// A read of new entries blocks unless `readingAhead` (``DurableStreams/behind``).
    func continueReading(readingAhead: Bool = false) {
        let state = loopState
        let durable = state.durable
        guard let config = endpoint.durable, let reader = state.reader, reader.isOpen, !isClosed else { return }
        for key in durable.streams.keys.sorted() {
            guard let stream = durable.streams[key] else { continue }
            if stream.wanted > 0, !stream.groupReady, !stream.creating {
                let start = config.groupStart == .newEntries ? "$" : "0"
                guard reader.send(Self.arguments(["XGROUP", "CREATE", key, config.group, start, "MKSTREAM"])) else { return }
                durable.streams[key]?.creating = true
                durable.expected.append(.groupCreated(key))
            }
            if stream.checksRetention {
                durable.streams[key]?.checksRetention = false
                guard reader.send(Self.arguments(["XINFO", "STREAM", key])),
                      reader.send(Self.arguments(["XINFO", "GROUPS", key])) else { return }
                durable.expected.append(.streamInfo(key))
                durable.expected.append(.groupInfo(key))
            }
        }
        guard !durable.reading else { return }
        let readable = durable.streams.keys.sorted().filter { durable.streams[$0]!.observing > 0 && durable.streams[$0]!.groupReady }
        guard !readable.isEmpty else { return }
        let pending = readable.filter { durable.streams[$0]!.readsPending }
        var arguments = ["XREADGROUP", "GROUP", config.group, config.consumer, "COUNT", "\(config.readCount)"]
        if pending.isEmpty {
            if !readingAhead { arguments += ["BLOCK", "\(config.blockMilliseconds(commandTimeout: endpoint.commandTimeout))"] }
            arguments += ["STREAMS"]
            arguments += readable + readable.map { _ in ">" }
        } else {
            arguments += ["STREAMS"] + pending + pending.map { durable.streams[$0]!.pendingCursor.description }
        }
        guard reader.send(Self.arguments(arguments)) else { return }
        durable.reading = true
        durable.behind = false
        if readingAhead, pending.isEmpty { shared.withLock { $0.metrics.durableReadsAhead += 1 } }
        durable.expected.append(.read(pending.isEmpty ? readable : pending, pending: !pending.isEmpty))
    }

    /// Before a drain that delivers a read at once (loop thread, outside hiredis' calls): when the
    /// read came back full (``DurableStreams/behind``), the next one goes out now, and Redis answers
    /// it while this one is delivered. Not before a queued drain: at most one batch waits beside the
    /// one delivered.
    func readAheadIfBehind() {
        if loopState.durable.behind { continueReading(readingAhead: true) }
    }

    /// After a drain delivered what was read: the delivered IDs are acknowledged, then the next
    /// read goes out (loop thread).
    func acknowledgeAndContinue() {
        let state = loopState
        let durable = state.durable
        if !durable.acknowledgements.isEmpty, let config = endpoint.durable, let reader = state.reader, reader.isOpen {
            for (key, ids) in durable.acknowledgements.sorted(by: { $0.key < $1.key })
            where reader.send(Self.arguments(["XACK", key, config.group] + ids)) {
                durable.expected.append(.acknowledged)
            }
        }
        durable.acknowledgements.removeAll()
        continueReading()
    }

    /// A reply on the reading connection (inside hiredis).
    func readerReceived(_ connection: RedisConnection, _ reply: redisReply) {
        connection.noteReply()
        let durable = loopState.durable
        guard !durable.expected.isEmpty else { return }
        switch durable.expected.removeFirst() {
        case .groupCreated(let key):
            groupCreated(key, reply)
        case .streamInfo(let key):
            durable.streams[key]?.info = StreamRetention.streamInfo(reply)
        case .groupInfo(let key):
            checkRetention(key, reply)
        case .read(let keys, let pending):
            durable.reading = false
            read(reply, keys: keys, pending: pending)
        case .acknowledged:
            if reply.type == REDIS_REPLY_INTEGER { shared.withLock { $0.metrics.durableAcknowledged += Int(reply.integer) } }
        }
    }

    private func groupCreated(_ key: String, _ reply: redisReply) {
        let durable = loopState.durable
        guard var stream = durable.streams[key] else { return }
        stream.creating = false
        let error = reply.type == REDIS_REPLY_ERROR ? RedisReply.string(reply) ?? "ERR" : nil
        let waiters = stream.waiters
        stream.waiters.removeAll()
        if let error, !error.hasPrefix("BUSYGROUP") {
            durable.streams[key] = stream
            logger.warning("Redis refused to create a consumer group", metadata: [
                BusLogKey.endpoint: "\(endpoint)", RedisLogKey.stream: "\(key)", BusLogKey.error: "\(error)",
            ])
            for waiter in waiters { waiter.finish(.failure(BusNotificationError(serverError: error))) }
            return
        }
        stream.groupReady = true
        // A group that was there may have missed entries while no one read it.
        stream.checksRetention = error != nil
        durable.streams[key] = stream
        for waiter in waiters { waiter.finish(.success(())) }
    }

    private func checkRetention(_ key: String, _ reply: redisReply) {
        guard let config = endpoint.durable, let info = loopState.durable.streams[key]?.info else { return }
        loopState.durable.streams[key]?.info = nil
        guard let missed = StreamRetention.missed(group: config.group, groups: reply, stream: info), missed > 0 else { return }
        shared.withLock { shared in
            shared.metrics.durableRetentionGaps += 1
            shared.metrics.durableLostToRetention += missed
        }
        logger.error("Redis stream trimmed entries its consumer group had not read (retention exceeded)", metadata: [
            BusLogKey.endpoint: "\(endpoint)", RedisLogKey.stream: "\(key)", RedisLogKey.group: "\(config.group)",
            RedisLogKey.lost: "\(missed)",
        ])
    }

    /// An `XREADGROUP` reply (inside hiredis): `[[key, [[id, [field, value…]]…]]…]`, nil when a
    /// blocking read timed out.
    private func read(_ reply: redisReply, keys: [String], pending: Bool) {
        let durable = loopState.durable
        if reply.type == REDIS_REPLY_ERROR {
            let message = RedisReply.string(reply) ?? "ERR"
            // The group is gone (deleted, or a failover's new master never had it): made again.
            for key in keys where message.hasPrefix("NOGROUP") { durable.streams[key]?.groupReady = false }
            logger.warning("Redis refused a stream read", metadata: [BusLogKey.endpoint: "\(endpoint)", BusLogKey.error: "\(message)"])
            return
        }
        guard reply.type == REDIS_REPLY_ARRAY, let streams = reply.element else { return }
        var lost = 0, skipped = 0
        for index in 0..<reply.elements {
            guard let streamReply = streams[index]?.pointee, streamReply.type == REDIS_REPLY_ARRAY, streamReply.elements >= 2,
                  let parts = streamReply.element, let keyBytes = parts[0].flatMap({ RedisReply.bytes($0.pointee) }),
                  let entries = parts[1]?.pointee else { continue }
            let key = String(decoding: keyBytes, as: UTF8.self)
            guard var stream = durable.streams[key] else { continue }
            if pending, entries.elements == 0 { stream.readsPending = false }
            if !pending, let config = endpoint.durable, entries.elements >= config.readCount { durable.behind = true }
            var leftPending = false
            for position in 0..<entries.elements {
                guard let entry = entries.element?[position]?.pointee, entry.type == REDIS_REPLY_ARRAY, entry.elements >= 2,
                      let idText = entry.element?[0].flatMap({ RedisReply.string($0.pointee) }),
                      let id = StreamEntryID(idText) else { continue }
                if pending { stream.pendingCursor = id }
                guard let fields = entry.element?[1]?.pointee, fields.type == REDIS_REPLY_ARRAY, fields.elements > 0 else {
                    // Pending, and trimmed since it was handed out: gone.
                    lost += 1
                    durable.acknowledgements[key, default: []].append(idText)
                    continue
                }
                if stream.observing == 0 {
                    leftPending = true // no one observes it any more: it waits in the group
                    continue
                }
                if let last = stream.lastDelivered, id <= last {
                    skipped += 1
                    durable.acknowledgements[key, default: []].append(idText)
                    continue
                }
                stream.lastDelivered = id
                durable.acknowledgements[key, default: []].append(idText)
                receiveEntry(key: keyBytes, fields: fields)
            }
            if leftPending {
                stream.readsPending = true
                stream.pendingCursor = .zero
            }
            durable.streams[key] = stream
        }
        if lost + skipped > 0 {
            shared.withLock { shared in
                shared.metrics.durableLostToRetention += lost
                shared.metrics.durableRedeliveriesSkipped += skipped
            }
        }
    }

    /// Decodes one entry's `payload` field into the inbox (inside hiredis).
    private func receiveEntry(key: UnsafeRawBufferPointer, fields: redisReply) {
        var index = 0
        while index + 1 < fields.elements {
            if let name = fields.element?[index].flatMap({ RedisReply.bytes($0.pointee) }), RedisReply.equals(name, "payload"),
               let payload = fields.element?[index + 1].flatMap({ RedisReply.bytes($0.pointee) }) {
                switch RedisWireFormat.envelope(channel: key, payload: payload, names: &loopState.channelNames) {
                case .success(let envelope): loopState.inbox.append(.notification(envelope))
                case .failure(let reason): loopState.inbox.append(.malformed(channel: String(decoding: key, as: UTF8.self), reason: reason))
                }
                return
            }
            index += 2
        }
        loopState.inbox.append(.malformed(channel: String(decoding: key, as: UTF8.self),
                                          reason: .notAnEnvelope("a stream entry without a payload field")))
    }

    static func arguments(_ words: [String]) -> [[UInt8]] { words.map { Array($0.utf8) } }
}
