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

    /// Waits until the server has answered every post this transport made before the call (a PING
    /// after them on the publishing connection), at most `timeout`.
    func flush(timeout: Duration) throws(BusNotificationError) {
        guard !isClosed else { throw .disconnected }
        let waiter = LoopWaiter()
        let queued = onLoop { transport in
            let state = transport.loopState
            guard state.ready, let publisher = state.publisher, publisher.send([Array("PING".utf8)]) else {
                waiter.finish(.failure(.disconnected))
                return
            }
            state.flushWaiters.append(waiter)
        }
        guard queued else { throw .disconnected }
        switch waiter.wait(on: loop, timeout: timeout) {
        case .success?: return
        case .failure(let error)?: throw error
        case nil: throw .timedOut
        }
    }
}
