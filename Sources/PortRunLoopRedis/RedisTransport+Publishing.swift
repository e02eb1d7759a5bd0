@_spi(Transport) import PortRunLoopDBus
import PortRunLoopKit

extension RedisTransport {
    /// Encodes on the calling thread (a typed error for bad input) and publishes from the loop.
    /// Not ready (the connection down or being restored): kept, up to the endpoint's limit.
    func post(_ envelope: NotificationEnvelope) throws(BusNotificationError) {
        let payload = try RedisWireFormat.payload(for: envelope, sender: localName ?? "")
        guard !isClosed else { throw .disconnected }
        let item = PendingPublish(channel: Array(RedisChannelNaming.channel(for: envelope.name).utf8), payload: Array(payload))
        if loop.isCurrentThread {
            publish(item)
        } else if !loop.perform({ self.publish(item) }) {
            throw .disconnected
        }
    }

    /// Publishes `item` now, or keeps it for the reconnection (loop thread).
    private func publish(_ item: PendingPublish) {
        let state = loopState
        guard !isClosed else { return }
        if state.ready {
            send(item)
            return
        }
        if state.buffered.count < endpoint.disconnectedPostLimit {
            state.buffered.append(item)
            let count = state.buffered.count
            shared.withLock { $0.metrics.bufferedWhileDisconnected = count }
            return
        }
        shared.withLock { $0.metrics.droppedWhileDisconnected += 1 }
        if !state.dropReported {
            state.dropReported = true
            logger.warning("Redis connection down and the post buffer is full; posts are dropped until it is back",
                           metadata: ["endpoint": "\(endpoint)", "limit": "\(endpoint.disconnectedPostLimit)"])
        }
    }

    /// PUBLISH on the publishing connection (ready).
    func send(_ item: PendingPublish) {
        guard let publisher = loopState.publisher, publisher.send([Array("PUBLISH".utf8), item.channel, item.payload]) else {
            shared.withLock { $0.metrics.droppedWhileDisconnected += 1 } // hiredis refused: the context is going away
            return
        }
        shared.withLock { $0.metrics.published += 1 }
    }
}
