import Foundation

extension MessagePort {
    /// Sends a request to the port of another process this remote port stands for, and waits for
    /// its reply (`CFMessagePortSendRequest`). The receiving handler answers with
    /// ``MessagePort/Message/reply(msgid:components:before:)``; the reply comes back over the same
    /// connection, matched by a request id.
    ///
    /// A thread without a loop reads the connection's socket itself: it spins for the reply while
    /// replies keep coming within microseconds (as a `performAndWait` caller does), then blocks
    /// polling the socket. A thread with a loop waits
    /// as ``PortRunLoop/performAndWait(timeout:_:)`` does: its loop serves synchronous work
    /// addressed to it meanwhile (so the answering handler may call back into it with
    /// `performAndWait`), and reads the connection; its ports, timers and other sources wait.
    ///
    /// - Parameters:
    ///   - msgid: an identifier for the receiver.
    ///   - components: data to carry.
    ///   - sendTimeout: how long to wait for a credit (the receiver's queue is full) or room in the socket.
    ///   - receiveTimeout: how long to wait for the reply once sent.
    /// - Returns: the reply: its `msgid`, `components`, and this port as `receivePort`.
    /// - Throws: ``CrossProcessPortError/sendTimedOut``, ``CrossProcessPortError/receiveTimedOut``,
    ///   ``CrossProcessPortError/invalidPort`` (this port was invalidated), ``CrossProcessPortError/peerDied``,
    ///   ``CrossProcessPortError/messageTooLarge(size:limit:)``, ``CrossProcessPortError/notARemotePort``.
    ///
    /// Thread-safety: any thread.
    public func sendRequest(msgid: UInt32 = 0, components: [Data] = [], sendTimeout: Duration,
                            receiveTimeout: Duration) throws(CrossProcessPortError) -> MessagePort.Message {
        guard let connection = remote as? RemoteConnection else { throw .notARemotePort }
        // Invalid: invalidated here, or the connection's end invalidated it (then that end is the error).
        guard !gate.isClosed else { throw connection.endError ?? .invalidPort }
        let reply = try connection.request(msgid: msgid, components: components,
                                           sendTimeout: max(0, sendTimeout.seconds),
                                           receiveTimeout: max(0, receiveTimeout.seconds))
        return replyMessage(reply)
    }

    /// ``sendRequest(msgid:components:sendTimeout:receiveTimeout:)-834zi`` carrying file
    /// descriptors (`SCM_RIGHTS`; the caller keeps its own, see
    /// ``send(before:msgid:components:fileDescriptors:from:)``). The reply's descriptors, if any,
    /// are in its ``Message/fileDescriptors``.
    ///
    /// - Throws: as the form without descriptors, and ``CrossProcessPortError/tooManyFileDescriptors(count:limit:)``
    ///   beyond ``CrossProcessPortOptions/maximumFileDescriptorsPerMessage``.
    ///
    /// Thread-safety: any thread.
    public func sendRequest(msgid: UInt32 = 0, components: [Data] = [], fileDescriptors: [Int32], sendTimeout: Duration,
                            receiveTimeout: Duration) throws(CrossProcessPortError) -> MessagePort.Message {
        guard let connection = remote as? RemoteConnection else { throw .notARemotePort }
        guard !gate.isClosed else { throw connection.endError ?? .invalidPort }
        let reply = try connection.request(msgid: msgid, components: components, descriptors: fileDescriptors,
                                           sendTimeout: max(0, sendTimeout.seconds),
                                           receiveTimeout: max(0, receiveTimeout.seconds))
        return replyMessage(reply)
    }

    /// The message a request's `reply` becomes, received on this port. Only a reply that carries
    /// descriptors needs a payload to hold them.
    private func replyMessage(_ reply: ReplyWait.Reply) -> MessagePort.Message {
        guard !reply.descriptors.isEmpty else {
            return MessagePort.Message(msgid: reply.msgid, components: reply.components, receivePort: self)
        }
        let payload = MessagePort.Payload(components: reply.components, replyAddress: nil, context: nil, creditSink: nil,
                                          fileDescriptors: reply.descriptors)
        return MessagePort.Message(msgid: reply.msgid, payload: payload, receivePort: self)
    }

    /// ``sendRequest(msgid:components:sendTimeout:receiveTimeout:)-834zi`` for async callers, with
    /// no thread blocked. The request is sent from the calling task; the library's reader thread
    /// (one per process, started by the first async request) reads the connection while the task
    /// waits, and the reply resumes the task. When the receiver's queue is full (no credit) or the
    /// socket is, and `sendTimeout` allows waiting, the task waits for a credit or room the same
    /// way, suspended. Cancelling the task ends either wait at once with
    /// ``CrossProcessPortError/cancelled`` (a request cancelled before it was sent is not sent).
    ///
    /// - Parameters:
    ///   - msgid: an identifier for the receiver.
    ///   - components: data to carry.
    ///   - sendTimeout: how long to wait for a credit or room in the socket.
    ///   - receiveTimeout: how long to wait for the reply once sent.
    /// - Returns: the reply.
    /// - Throws: as the synchronous form; ``CrossProcessPortError/cancelled``; and
    ///   ``CrossProcessPortError/systemCallFailed(_:errno:)`` when the system refuses the reader
    ///   thread (`"pthread_create"`) or its watch of the connection (`"epoll_ctl"`).
    ///
    /// Thread-safety: any task.
    public func sendRequest(msgid: UInt32 = 0, components: [Data] = [], sendTimeout: Duration,
                            receiveTimeout: Duration) async throws(CrossProcessPortError) -> MessagePort.Message {
        try await asyncRequest(msgid: msgid, components: components, descriptors: [], sendTimeout: sendTimeout,
                               receiveTimeout: receiveTimeout)
    }

    /// The async request, awaited through the reader thread.
    private func asyncRequest(msgid: UInt32, components: [Data], descriptors: [Int32], sendTimeout: Duration,
                              receiveTimeout: Duration) async throws(CrossProcessPortError) -> MessagePort.Message {
        guard let connection = remote as? RemoteConnection else { throw .notARemotePort }
        guard !gate.isClosed else { throw connection.endError ?? .invalidPort }
        let reply = try await connection.asyncRequest(msgid: msgid, components: components, descriptors: descriptors,
                                                      sendTimeout: max(0, sendTimeout.seconds),
                                                      receiveTimeout: max(0, receiveTimeout.seconds))
        return replyMessage(reply)
    }
}

extension MessagePort {
    /// The `sendRequest(msgid:components:fileDescriptors:sendTimeout:receiveTimeout:)` above, for async
    /// callers: awaited as the async form without descriptors is.
    ///
    /// Thread-safety: any task.
    public func sendRequest(msgid: UInt32 = 0, components: [Data] = [], fileDescriptors: [Int32], sendTimeout: Duration,
                            receiveTimeout: Duration) async throws(CrossProcessPortError) -> MessagePort.Message {
        try await asyncRequest(msgid: msgid, components: components, descriptors: fileDescriptors,
                               sendTimeout: sendTimeout, receiveTimeout: receiveTimeout)
    }
}

extension MessagePort.Message {
    /// Answers this message on its ``replyPort``: the reply to a request from another process
    /// (``MessagePort/sendRequest(msgid:components:sendTimeout:receiveTimeout:)-834zi``; one reply per
    /// request: once one went out, later ones return false, while one that returned false may be
    /// sent again), a message to the reply port another process named, or a send to a local reply
    /// port.
    ///
    /// - Parameters:
    ///   - msgid: an identifier for the receiver.
    ///   - components: data to carry.
    ///   - date: how long to wait for room (a local reply port's queue, or the socket of
    ///     the process to answer). There is deliberately no default: a handler that waits runs on
    ///     its loop's thread, and a peer that does not read could otherwise hold that loop.
    /// - Returns: false when there is no reply port, it is invalid (its process or connection is
    ///   gone, or the request was already answered), or it stayed full until `date` (a reply to a
    ///   request may then be sent again).
    ///
    /// Thread-safety: any thread.
    @discardableResult
    public func reply(msgid: UInt32 = 0, components: [Data] = [], before date: Date) -> Bool {
        replyAddress?.send(before: date, msgid: msgid, components: components, descriptors: []) ?? false
    }

    /// ``reply(msgid:components:before:)`` carrying file descriptors; the caller keeps its own
    /// (see ``MessagePort/send(before:msgid:components:fileDescriptors:from:)``).
    ///
    /// Thread-safety: any thread.
    @discardableResult
    public func reply(msgid: UInt32 = 0, components: [Data] = [], fileDescriptors: [Int32], before date: Date) -> Bool {
        replyAddress?.send(before: date, msgid: msgid, components: components, descriptors: fileDescriptors) ?? false
    }
}
