internal import CLibEvent

/// Owns one `event_base` (`event_base_new` / `event_base_free`).
///
/// Thread-safety: owner thread only, except that ``LoopEvent/activate()`` on events of this base may
/// be called from any thread (libevent's pthread locking makes `event_active` safe).
final class EventBase {
    let pointer: OpaquePointer

    init() throws(PortRunLoopError) {
        try LibEvent.ensureThreadingEnabled()
        guard let base = event_base_new() else { throw .eventBaseCreationFailed }
        self.pointer = base
    }

    deinit { event_base_free(pointer) }

    /// One pass of `event_base_loop(base, EVLOOP_ONCE | EVLOOP_NO_EXIT_ON_EMPTY [| EVLOOP_NONBLOCK])`:
    /// waits for at least one event unless `blocking` is false, runs the (marking-only) callbacks
    /// of all active events and returns.
    func runOnce(blocking: Bool) {
        var flags = EVLOOP_ONCE | EVLOOP_NO_EXIT_ON_EMPTY
        if !blocking { flags |= EVLOOP_NONBLOCK }
        let result = event_base_loop(pointer, flags)
        // -1 means re-entry or an internal error. Handlers never run inside libevent callbacks, so
        // re-entry is impossible by construction; anything else is a libevent failure we cannot fix.
        precondition(result != -1, "PortRunLoop: event_base_loop failed (re-entered or backend error)")
    }
}

/// One libevent `struct event` (`event_new` / `event_add` / `event_del` / `event_active` / `event_free`).
///
/// Thread-safety: create, add, remove and free on the owner thread of its base; ``activate()`` from
/// any thread. Deleting from the owner thread only avoids libevent's cross-thread `event_del`, which
/// blocks while the event's callback runs.
final class LoopEvent {
    private let pointer: OpaquePointer
    private(set) var isPending = false
    // Keeps the receiver alive for as long as libevent may call it.
    private let receiver: LibEventReceiver

    /// `event_new(base, fd, flags, callback, receiver)`; `fd` -1 for timers and pure doorbells.
    init(base: EventBase, fileDescriptor: Int32 = -1, flags: EventFlags, receiver: LibEventReceiver) throws(PortRunLoopError) {
        self.receiver = receiver
        let context = Unmanaged.passUnretained(receiver).toOpaque()
        guard let event = event_new(base.pointer, fileDescriptor, flags.rawValue,
                                    portRunLoopEventCallbackPointer, context) else {
            throw .eventCreationFailed
        }
        self.pointer = event
    }

    deinit { event_free(pointer) }

    /// `event_add(ev, timeout)`. A nil timeout waits for I/O only; otherwise the event also fires
    /// (`EV_TIMEOUT`) after `seconds`, clamped to libevent's range.
    func add(timeoutSeconds: Double? = nil) throws(PortRunLoopError) {
        let result: Int32
        if let seconds = timeoutSeconds {
            var tv = timeval(seconds: seconds)
            result = event_add(pointer, &tv)
        } else {
            result = event_add(pointer, nil)
        }
        guard result == 0 else { throw .eventRegistrationFailed }
        isPending = true
    }

    /// `event_del(ev)`; a no-op when not pending.
    func remove() {
        guard isPending else { return }
        event_del(pointer)
        isPending = false
    }

    /// `event_active(ev, EV_READ, 0)`: rings the doorbell. Merged with any activation not yet run.
    func activate() {
        event_active(pointer, Int32(EV_READ), 0)
    }
}

private let portRunLoopEventCallbackPointer: event_callback_fn = { fd, what, context in
    guard let context else { return }
    Unmanaged<LibEventReceiver>.fromOpaque(context).takeUnretainedValue().eventFired(EventFlags(rawValue: what))
}

extension timeval {
    /// A relative timeout for libevent: negative and NaN become 0, and anything beyond 30 days is
    /// clamped (the loop re-checks dates when it wakes, so a clamped wait just wakes and re-arms).
    init(seconds: Double) {
        let clamped = seconds.isNaN ? 0 : min(max(seconds, 0), 30 * 86_400)
        let whole = clamped.rounded(.down)
        var micro = ((clamped - whole) * 1_000_000).rounded(.up)
        var sec = whole
        if micro >= 1_000_000 { sec += 1; micro -= 1_000_000 }
        self.init(tv_sec: Int(sec), tv_usec: Int(micro))
    }
}
