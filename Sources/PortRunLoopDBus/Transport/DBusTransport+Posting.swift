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

    /// Hands `messages` to libdbus, in order, and releases them (loop thread). libdbus writes each
    /// as it is queued; the write watch it enables and disables meanwhile is applied once, after
    /// the batch (a loop source only when something is left to write).
    ///
    /// libdbus is given one post at a time that it cannot write whole: once its outgoing queue is
    /// not empty after a post (the socket is full, or the peer has gone: libdbus waits for the
    /// end of the stream before it calls the connection lost), later posts wait here until the
    /// write watch has emptied it. A lost or closed connection therefore drops exactly the posts
    /// waiting here and the one libdbus holds, which are counted (libdbus drops its queue and
    /// reports no count).
    private func send(_ messages: some Collection<OutgoingMessage>) {
        guard isConnected else {
            for message in messages { dbus_message_unref(message.pointer) }
            if !messages.isEmpty { delegate?.transportDiscardedUnsent(count: messages.count) }
            return
        }
        let state = loopState
        // A connection libdbus has found lost (its `Disconnected` signal not dispatched yet) drops
        // whatever it is given: the batch waits, to be counted with the loss. Within the batch the
        // connection cannot be found lost: libdbus learns of a loss by reading, and a write that
        // fails with EPIPE only leaves the message queued until it reads the end of the stream.
        if state.libdbusHoldsAPost || dbus_connection_get_is_connected(connection) == 0 {
            state.waitingToSend.append(contentsOf: messages)
            return
        }
        var refused = 0
        var handed = 0
        withWatchChangesDeferred {
            for message in messages {
                if state.libdbusHoldsAPost {
                    state.waitingToSend.append(message)
                    continue
                }
                // libdbus refuses a message only when it cannot allocate what queuing it takes:
                // counted as a post discarded unsent.
                if dbus_connection_send(connection, message.pointer, nil) == 0 {
                    refused += 1
                } else {
                    handed += 1
                    state.libdbusHoldsAPost = dbus_connection_has_messages_to_send(connection) != 0
                }
                dbus_message_unref(message.pointer)
            }
        }
        if refused > 0 { delegate?.transportDiscardedUnsent(count: refused) }
        // An observer in another process may answer (see `IdleSpin`: a conversation).
        if handed > 0 { PortRunLoop.noteMessageSentFromCurrentThread() }
    }

    /// After libdbus wrote (loop thread): once it holds nothing more, the posts waiting for it go.
    /// An empty queue on a connection libdbus found lost was dropped, not written: the loss
    /// counts it.
    func sendWaitingIfWritten() {
        let state = loopState
        guard state.libdbusHoldsAPost, dbus_connection_has_messages_to_send(connection) == 0,
              dbus_connection_get_is_connected(connection) != 0 else { return }
        state.libdbusHoldsAPost = false
        let waiting = state.waitingToSend
        state.waitingToSend.removeAll()
        send(waiting)
    }

    /// The connection is lost or closed: libdbus has dropped the post it held, and the posts
    /// waiting behind it will not go. Counted, and released.
    func discardUnwrittenPosts() {
        let state = loopState
        let count = state.waitingToSend.count + (state.libdbusHoldsAPost ? 1 : 0)
        for message in state.waitingToSend { dbus_message_unref(message.pointer) }
        state.waitingToSend.removeAll()
        state.libdbusHoldsAPost = false
        if count > 0 { delegate?.transportDiscardedUnsent(count: count) }
    }
}
