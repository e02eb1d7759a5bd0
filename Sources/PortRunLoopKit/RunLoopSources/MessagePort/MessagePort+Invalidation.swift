import Foundation
import Logging

extension MessagePort {
    /// Invalidates the port. Once this returns, no handler starts for it (one already running on
    /// the loop's thread may finish; ``waitForRunningHandlers(timeout:)`` waits for it). Queued
    /// messages are discarded and counted in ``statistics`` (and, when there were any, logged once
    /// at `.notice` with their count: see ``init(queueLimit:logger:)``); senders waiting for room
    /// return false, and later sends return false. The invalidation handler, if one is set
    /// (``setInvalidationHandler(on:_:)``), is called once, with ``InvalidationReason/invalidated``.
    /// Idempotent.
    ///
    /// Thread-safety: any thread, including from inside the port's own handler.
    public func invalidate() { invalidate(reason: .invalidated) }

    /// ``invalidate()`` with the reason its handler is given (a remote port whose connection
    /// ended calls it with the connection's). Idempotent: only the first call's reason counts.
    ///
    /// With `required`, the owner thread of that loop as it shuts down: the port is invalidated
    /// only if it is still scheduled there, and the result says whether it was. A port another
    /// thread removed from `required` (and may have scheduled in a live loop since) is not that
    /// loop's to invalidate; the check and the closing share the critical section below, so a
    /// removal and an add elsewhere made meanwhile find the port invalid rather than leaving a
    /// live loop with a port the dead one then invalidates.
    ///
    /// In one critical section (unless `required` is given and the port is not scheduled there,
    /// or the port was closed already: false) the gate closes and the port turns invalid, its
    /// queued messages are discarded, senders waiting for room are woken, and it leaves its loop. A second `invalidate()` waits for the first one's section, so it
    /// returns with the port invalid too, and any send after either is refused. Then, with the
    /// lock let go: the observers, the remote connection, the log, the loop's registration, the
    /// invalidation handler.
    @discardableResult
    func invalidate(reason: InvalidationReason = .invalidated, ifScheduledOn required: PortRunLoop? = nil) -> Bool {
        var discarded = 0
        var loop: PortRunLoop?
        let closed = withLock { () -> Bool in
            if let required, state.loop !== required { return false }
            guard gate.close() else { return false }
            state.isValid = false
            discarded = state.queue.count
            state.discarded += discarded
            state.queue.removeAll()
            state.readyOnLoop = false
            notifyRoomChanged()
            loop = state.loop
            state.loop = nil
            state.registration = nil
            state.modes = []
            return true
        }
        guard closed else { return false }
        for observer in invalidation.withLock({ record in defer { record.observers = [] }; return record.observers }) {
            observer()
        }
        remote?.invalidate()
        if discarded > 0 {
            logger(loop: loop).notice("MessagePort invalidated with queued messages; they were discarded", metadata: [
                LogKey.port: "\(self)", LogKey.loop: "\(loop?.name ?? "none")", LogKey.discarded: "\(discarded)",
            ])
        }
        loop?.registerOnOwner { $0.unregisterPort(self, discardingBuffered: true) }
        // Recorded after the port's state changed: a handler set from now on runs at once.
        let handler = invalidation.withLock { record -> InvalidationHandler? in
            record.reason = reason
            record.portLoop = loop
            defer { record.handler = nil }
            return record.handler
        }
        if let handler { runInvalidationHandler(handler, reason: reason, portLoop: loop) }
        return true
    }

    /// Calls `observer` once when the port is invalidated (at once, on this thread, if it already
    /// is). The observer must not call back into this port's invalidation.
    func onInvalidation(_ observer: @escaping @Sendable () -> Void) {
        let added = invalidation.withLock { record -> Bool in
            guard !gate.isClosed else { return false }
            record.observers.append(observer)
            return true
        }
        if !added { observer() }
    }

    /// Waits until no handler of this port is running (on the loop's thread). Called from inside
    /// the port's own handler, it does not wait for that call. Returns false on timeout.
    ///
    /// The loop delivers a port's messages in batches and counts the whole batch as running, so
    /// this may also wait out the rest of the batch in progress. After ``invalidate()`` that is at
    /// most the handler call already running: the batch stops at its next message.
    ///
    /// Thread-safety: any thread.
    @discardableResult
    public func waitForRunningHandlers(timeout: Duration? = nil) -> Bool {
        let deadline = timeout.map { System.monotonicSeconds() + $0.seconds } ?? .infinity
        // The batches of this port the calling thread is itself inside (a handler, or a nested run
        // continuing the batch): whatever loop the port is attached to now, or none after
        // `invalidate()` or its removal from its last mode.
        let held = PortRunLoop.existingForCurrentThread()?.portsInDelivery.count { $0 === self } ?? 0
        return gate.waitForHandlers(deadlineMonotonic: deadline, excluding: held)
    }

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
