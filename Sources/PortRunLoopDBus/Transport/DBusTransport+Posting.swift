import CDBus
import PortRunLoopKit

extension DBusTransport {
    /// Builds the signal on the calling thread (a typed error for bad input) and sends it from the
    /// loop. On the loop's thread it is sent at once (after whatever other threads queued before).
    /// From another thread it joins the post queue: the first post of a batch rings the loop once
    /// (one `perform`), and the loop sends every queued message at once (``sendQueued()``).
    func post(_ envelope: NotificationEnvelope) throws(BusNotificationError) {
        let message = try NotificationSignalWriter.message(for: envelope)
        guard isConnected else {
            dbus_message_unref(message)
            throw .disconnected
        }
        let outgoing = OutgoingMessage(pointer: message)
        if loop.isCurrentThread {
            // Whatever other threads queued before stays ahead of this post.
            sendQueued()
            send(CollectionOfOne(outgoing))
            return
        }
        guard postQueue.append(outgoing) else { return }
        if !loop.perform({ self.sendQueued() }) {
            // The loop is shut down: nothing queued will go out (the others' posts already returned;
            // this one throws, so it is not counted as discarded).
            discardQueuedPosts(includingTheCallers: true)
            throw .disconnected
        }
    }

    /// Sends every queued post, in queue order (loop thread): one batch.
    func sendQueued() {
        postQueue.drain { send($0) }
    }

    /// Releases the queued posts unsent (the loop is gone, or the transport is), and reports those
    /// whose posts returned (all but the caller's own, when `includingTheCallers`: it throws).
    func discardQueuedPosts(includingTheCallers: Bool = false) {
        let unsent = postQueue.removeAll()
        for message in unsent { dbus_message_unref(message.pointer) }
        let returned = unsent.count - (includingTheCallers ? 1 : 0)
        if returned > 0 { delegate?.transportDiscardedUnsent(count: returned) }
    }

    /// Queues `messages` on the connection, in order, and releases them (loop thread). libdbus
    /// writes each as it is queued; the write watch it enables and disables meanwhile is applied
    /// once, after the batch (a loop source only when something is left to write).
    private func send(_ messages: some Collection<OutgoingMessage>) {
        guard isConnected else {
            for message in messages { dbus_message_unref(message.pointer) }
            if !messages.isEmpty { delegate?.transportDiscardedUnsent(count: messages.count) }
            return
        }
        var refused = 0
        withWatchChangesDeferred {
            for message in messages {
                // libdbus refuses a message only when it cannot allocate what queuing it takes
                // (on a connection already lost it returns true and drops it; that loss is
                // reported as the disconnection): counted as a post discarded unsent.
                if dbus_connection_send(connection, message.pointer, nil) == 0 { refused += 1 }
                dbus_message_unref(message.pointer)
            }
        }
        if refused > 0 { delegate?.transportDiscardedUnsent(count: refused) }
        // An observer in another process may answer (see `IdleSpin`: a conversation).
        if messages.count > refused { PortRunLoop.noteMessageSentFromCurrentThread() }
    }
}
