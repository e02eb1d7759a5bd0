import Foundation

extension MessagePort {
    /// Why a port became invalid, as told to its invalidation handler
    /// (``MessagePort/setInvalidationHandler(on:_:)``).
    ///
    /// Thread-safety: a value type; `Sendable`.
    public enum InvalidationReason: Sendable, Equatable, CustomStringConvertible {
        /// ``MessagePort/invalidate()`` was called on this port (or the loop it is scheduled in
        /// shut down, which invalidates it).
        case invalidated
        /// A remote port: the publisher invalidated its port or withdrew the name
        /// (``PublishedMessagePort/unpublish()``); it said so before closing the connection.
        case publisherWithdrew
        /// A remote port: the connection ended without a word from the publisher: its process
        /// died (SIGKILL included) or closed the socket.
        case peerDied
        /// A remote port: the publisher broke the wire protocol (a malformed or oversized frame,
        /// more credits than granted); the connection was closed on this side.
        case protocolViolation(String)
        /// A remote port: a read of the connection's socket failed on this side, with its error
        /// (logged too), or a loop reading it (the `readingOn:` loop, or one a request waited on)
        /// could no longer watch the socket; the connection was closed. Requests then throw ``CrossProcessPortError/systemCallFailed(_:errno:)`` or
        /// ``CrossProcessPortError/loopRefusedSocket(_:)``.
        case connectionFailed(String)

        /// Thread-safety: a value type.
        public var description: String {
            switch self {
            case .invalidated: "invalidated"
            case .publisherWithdrew: "the publisher withdrew the port"
            case .peerDied: "the publisher's process died or closed the connection"
            case .protocolViolation(let why): "protocol violation: \(why)"
            case .connectionFailed(let why): "the connection failed: \(why)"
            }
        }
    }

    /// Sets a closure called once, when the port becomes invalid, with the reason: the counterpart
    /// of `CFMessagePortSetInvalidationCallBack` and `NSPortDidBecomeInvalidNotification`. nil
    /// removes it; a second call replaces the first.
    ///
    /// Where it runs, `loop` or, when nil, the port's own loop:
    /// - for a remote port (``MessagePortNameRegistry/remotePort(named:options:readingOn:)``), the
    ///   `readingOn:` loop; for a local port, the loop it is scheduled in when it is invalidated;
    /// - it is queued there as control work that runs in every mode before the loop's next turn,
    ///   or called at once when the invalidation happens on that loop's thread;
    /// - with no such loop (or one that has shut down), it is called on the thread that found the
    ///   port invalid, after the port's locks are released.
    ///
    /// When it is called: a local port, at ``invalidate()`` (or its loop's shutdown). A remote port
    /// also becomes invalid, by itself, when its connection ends: the publisher withdrew the port,
    /// its process died, or it broke the protocol. A remote port read by a loop (the `readingOn:`
    /// loop, or the `loop` given here: giving one starts reading the connection there) sees that
    /// at once, with no send needed (a `loop` that refuses to watch the connection ends it, with
    /// ``InvalidationReason/connectionFailed(_:)``); one that no loop reads sees it at its next
    /// send, request or ``isValid``. The reply port of a message that came from another process
    /// (``MessagePort/Message/replyPort``) reports only its own ``invalidate()``.
    ///
    /// Set on a port that is already invalid, the closure is called at once by the same rule
    /// (queued on its loop, or called on this thread without one), with the reason it became
    /// invalid. It is called at most once per port, and never after being removed or replaced.
    ///
    /// - Parameters:
    ///   - loop: where to run the closure; nil: the port's own loop, as above.
    ///   - handler: the closure, given the reason.
    ///
    /// Thread-safety: any thread; the closure runs as described above.
    public func setInvalidationHandler(on loop: PortRunLoop? = nil,
                                       _ handler: (@Sendable (InvalidationReason) -> Void)?) {
        let new = handler.map { InvalidationHandler(loop: loop, body: $0) }
        if let loop, handler != nil { remote?.watchForEnd(on: loop) }
        let (old, fired) = invalidation.withLock { record -> (InvalidationHandler?, (InvalidationHandler, InvalidationReason, PortRunLoop?)?) in
            let old = record.handler
            if let reason = record.reason, let new {
                record.handler = nil
                return (old, (new, reason, record.portLoop))
            }
            record.handler = new
            return (old, nil)
        }
        withExtendedLifetime(old) {}
        if let (handler, reason, portLoop) = fired { runInvalidationHandler(handler, reason: reason, portLoop: portLoop) }
    }

    /// Runs `handler` as ``setInvalidationHandler(on:_:)`` describes (no lock of the port held).
    func runInvalidationHandler(_ handler: InvalidationHandler, reason: InvalidationReason, portLoop: PortRunLoop?) {
        let body = handler.body
        if let loop = handler.loop ?? remote?.readingLoop ?? portLoop, loop.onOwner({ _ in body(reason) }) { return }
        body(reason)
    }
}

/// An invalidation handler and the loop it was set for (nil: the port's own). The loop is held
/// weakly, like the port's own: a loop freed meanwhile (its thread exited) counts as none.
///
/// Thread-safety: `Sendable`; `loop` is a weak reference (atomic to read), `body` immutable.
struct InvalidationHandler: @unchecked Sendable {
    private(set) weak var loop: PortRunLoop?
    let body: @Sendable (MessagePort.InvalidationReason) -> Void

    init(loop: PortRunLoop?, body: @escaping @Sendable (MessagePort.InvalidationReason) -> Void) {
        self.loop = loop
        self.body = body
    }
}

/// What a port's invalidation calls and records (``MessagePort/setInvalidationHandler(on:_:)``).
/// Guarded by the port's `invalidation` mutex.
///
/// Thread-safety: a value type, kept behind a mutex.
struct InvalidationRecord {
    /// Internal observers, called once by the first invalidation (CrossProcess/ unpublishes).
    var observers: [@Sendable () -> Void] = []
    /// The user's handler; taken (set to nil) when it is run.
    var handler: InvalidationHandler?
    /// Why the port became invalid; nil while it is valid.
    var reason: MessagePort.InvalidationReason?
    /// The loop the port was scheduled in when it became invalid; weak: an invalid port must not
    /// keep its former loop alive (a loop is freed once its thread exited).
    weak var portLoop: PortRunLoop?
}
