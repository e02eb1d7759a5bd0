import PortRunLoopBus
import PortRunLoopKit

extension RedisTransport {
    /// Encodes the whole PUBLISH (or, for a durable name, XADD) command on the calling thread (a typed error for bad input) and
    /// publishes from the loop. From another thread the command joins the post queue: the first
    /// post of a batch rings the loop once (one `perform`), and the loop takes every queued command
    /// at once (``publishQueued()``). Not ready (the connection down or being restored): kept, up
    /// to the endpoint's limit.
    func post(_ envelope: NotificationEnvelope) throws(BusNotificationError) {
        // A durable name is appended to its stream (XADD) instead of published.
        let streamLength = durableNames.isEmpty || !durableNames.contains(envelope.name) ? nil : endpoint.durable?.maximumLength
        let item = try PendingPublish(envelope, sender: localName ?? "", format: endpoint.payloadFormat, streamLength: streamLength)
        guard !isClosed else { throw .disconnected }
        if loop.isCurrentThread {
            // Whatever other threads queued before stays ahead of this post.
            publishQueued()
            publish(CollectionOfOne(item))
            return
        }
        guard postQueue.append(item) else { return }
        if !loop.perform({ self.publishQueued() }) {
            // The loop is shut down: nothing queued will go out. The others' posts already returned.
            let lost = postQueue.removeAll().count
            if lost > 1 { shared.withLock { $0.metrics.droppedWhileDisconnected += lost - 1 } }
            throw .disconnected
        }
    }

    /// Publishes every queued post, in queue order (loop thread): one batch, written at once.
    func publishQueued() {
        postQueue.drain { publish($0) }
    }

    /// Publishes `items` now, or keeps them for the reconnection (loop thread). Every PUBLISH is
    /// appended to hiredis' output before it writes, so a batch leaves in one write.
    private func publish(_ items: some Collection<PendingPublish>) {
        let state = loopState
        guard !isClosed else {
            // Queued by posts that returned before the close: they will not go out.
            shared.withLock { $0.metrics.droppedWhileDisconnected += items.count }
            return
        }
        if state.ready {
            send(items)
            return
        }
        keep(items)
    }

    /// Keeps `items` for the reconnection, up to the endpoint's limit; the rest are dropped and
    /// counted (loop thread).
    private func keep(_ items: some Collection<PendingPublish>) {
        let state = loopState
        var kept = 0, dropped = 0
        for item in items {
            if state.buffered.count < endpoint.disconnectedPostLimit {
                state.buffered.append(item)
                kept += 1
            } else {
                dropped += 1
            }
        }
        let count = state.buffered.count
        shared.withLock { shared in
            if kept > 0 { shared.metrics.bufferedWhileDisconnected = count }
            shared.metrics.droppedWhileDisconnected += dropped
        }
        if dropped > 0, !state.dropReported {
            state.dropReported = true
            logger.warning("Redis connection down and the post buffer is full; posts are dropped until it is back",
                           metadata: [BusLogKey.endpoint: "\(endpoint)", RedisLogKey.postLimit: "\(endpoint.disconnectedPostLimit)"])
        }
    }

    /// PUBLISH on the publishing connection (ready; loop thread): every command appended, then
    /// written at once; counted once.
    func send(_ items: some Collection<PendingPublish>) {
        var sent = 0
        var refused: [PendingPublish] = []
        if let publisher = loopState.publisher {
            publisher.batchingWrites {
                for item in items {
                    if publisher.send(formatted: item) { sent += 1 } else { refused.append(item) }
                }
            }
        } else {
            refused.append(contentsOf: items)
        }
        // The server answers every PUBLISH, and a subscriber may answer the notification.
        if sent > 0 { PortRunLoop.noteMessageSentFromCurrentThread() }
        shared.withLock { $0.metrics.published += sent }
        guard !refused.isEmpty else { return }
        // hiredis refused them: the connection is going away (its end is reported on a later
        // turn). Kept for the reconnection like any post made while disconnected, unless closed.
        if isClosed {
            shared.withLock { $0.metrics.droppedWhileDisconnected += refused.count }
        } else {
            keep(refused)
        }
    }

    /// Waits until the server has answered every post this transport made before the call (a PING
    /// after them on the publishing connection), at most `timeout`.
    func flush(timeout: Duration) throws(BusNotificationError) {
        guard !isClosed else { throw .disconnected }
        let waiter = makeWaiter()
        let queued = onLoop { transport in
            // Posts queued by other threads go out ahead of the PING.
            transport.publishQueued()
            let state = transport.loopState
            guard state.ready, let publisher = state.publisher, publisher.send([Array("PING".utf8)]) else {
                waiter.finish(.failure(.disconnected))
                return
            }
            state.flushWaiters.append(waiter)
            // The PING's reply must wake the loop, not wait below the low-water mark for company.
            publisher.setRepliesWanted(true)
        }
        guard queued else { throw .disconnected }
        switch waiter.wait(timeout: timeout) {
        case .success?: return
        case .failure(let error)?: throw error
        case nil: throw .timedOut
        }
    }
}
