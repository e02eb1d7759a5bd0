internal import CLibEvent

/// Owns one `event_base` (`event_base_new_with_config` / `event_base_free`).
///
/// The base is made with `EVENT_BASE_FLAG_NOLOCK`: every libevent call on it and its events happens
/// on the loop's own thread (other threads wake the loop through its ``Doorbell``, an eventfd they
/// write without calling libevent), so libevent's base lock and its internal notify fd would only
/// add a lock round trip to every `event_add`, `event_del` and dispatch.
///
/// Thread-safety: owner thread of the loop only.
final class EventBase {
    let pointer: OpaquePointer
    /// `event_add` calls made on this base's events (owner thread writes; any thread reads).
    let adds = OwnerCounter()
    /// `event_del` calls made on this base's events that removed a pending event.
    let deletes = OwnerCounter()

    init() throws(PortRunLoopError) {
        try LibEvent.ensureThreadingEnabled()
        guard let config = event_config_new() else { throw .eventBaseCreationFailed }
        defer { event_config_free(config) }
        event_config_set_flag(config, Int32(EVENT_BASE_FLAG_NOLOCK.rawValue))
        // A base takes three descriptors: the epoll instance and the pair libevent keeps for
        // signals. libevent treats a refused pair as fatal (it ends the process), so room for all
        // three is checked first and its absence is a typed error. Another thread may still take
        // descriptors in between; the check makes that a race, not the rule.
        guard System.descriptorsAvailable(Self.descriptorsPerBase) else { throw .eventBaseCreationFailed }
        guard let base = event_base_new_with_config(config) else { throw .eventBaseCreationFailed }
        self.pointer = base
    }

    deinit { event_base_free(pointer) }

    /// Descriptors `event_base_new_with_config` opens for a base made with
    /// `EVENT_BASE_FLAG_NOLOCK` on Linux: the epoll instance and the signal pair.
    static let descriptorsPerBase = 3

    /// One pass of `event_base_loop(base, EVLOOP_ONCE | EVLOOP_NO_EXIT_ON_EMPTY [| EVLOOP_NONBLOCK])`:
    /// waits for at least one event unless `blocking` is false, runs the (marking-only) callbacks
    /// of all active events and returns.
    func runOnce(blocking: Bool) {
        var flags = EVLOOP_ONCE | EVLOOP_NO_EXIT_ON_EMPTY
        if !blocking { flags |= EVLOOP_NONBLOCK }
        let result = event_base_loop(pointer, flags)
        // -1 means re-entry or an internal error. Handlers never run inside libevent callbacks, so
        // re-entry is impossible by construction; anything else is a libevent failure we cannot fix.
        InternalFailure.check(result != -1, "event_base_loop failed (re-entered or backend error)")
    }
}

/// One libevent `struct event` (`event_new` / `event_add` / `event_del` / `event_free`).
///
/// Thread-safety: owner thread of its base only.
final class LoopEvent {
    private let pointer: OpaquePointer
    private unowned let base: EventBase
    private let fileDescriptor: Int32
    private(set) var isPending = false
    // Keeps the receiver alive for as long as libevent may call it.
    private let receiver: LibEventReceiver

    /// `event_new(base, fd, flags, callback, receiver)`; `fd` -1 for a pure timer.
    init(base: EventBase, fileDescriptor: Int32 = -1, flags: EventFlags, receiver: LibEventReceiver) throws(PortRunLoopError) {
        self.receiver = receiver
        self.base = base
        self.fileDescriptor = fileDescriptor
        let context = Unmanaged.passUnretained(receiver).toOpaque()
        guard let event = event_new(base.pointer, fileDescriptor, flags.rawValue,
                                    portRunLoopEventCallbackPointer, context) else {
            throw .eventCreationFailed
        }
        self.pointer = event
    }

    /// A persistent, edge-triggered read event on `fd`, added at once: the loop's wake-up fds
    /// (``Doorbell``, ``WakeTimer``), which are never read: epoll reports every write or expiry as
    /// a new edge, and reading the counter back would cost a system call per wake-up for nothing.
    static func edges(of fd: Int32, base: EventBase, receiver: LibEventReceiver) throws(PortRunLoopError) -> LoopEvent {
        let event = try LoopEvent(base: base, fileDescriptor: fd, flags: [.read, .persist, .edgeTriggered], receiver: receiver)
        try event.add()
        return event
    }

    deinit { event_free(pointer) }

    /// `event_add(ev, timeout)`. A nil timeout waits for I/O only; otherwise the event also fires
    /// (`EV_TIMEOUT`) after `seconds`, clamped to libevent's range. On a pending event it replaces
    /// the timeout.
    func add(timeoutSeconds: Double? = nil) throws(PortRunLoopError) {
        let result: Int32
        if let seconds = timeoutSeconds {
            var tv = timeval(seconds: seconds)
            result = event_add(pointer, &tv)
        } else {
            result = event_add(pointer, nil)
        }
        base.adds.increment()
        guard result == 0 else { throw .eventRegistrationFailed }
        isPending = true
    }

    /// `event_del(ev)`; a no-op when not pending.
    func remove() {
        guard isPending else { return }
        event_del(pointer)
        base.deletes.increment()
        isPending = false
    }

    /// `event_assign` with new `flags` on the same fd, callback and receiver: changes what a
    /// removed (not pending) event watches for without freeing and allocating it. Re-add it after.
    func reassign(flags: EventFlags) {
        InternalFailure.check(!isPending, "an event's flags changed while it was pending")
        let context = Unmanaged.passUnretained(receiver).toOpaque()
        let result = event_assign(pointer, base.pointer, fileDescriptor, flags.rawValue, portRunLoopEventCallbackPointer, context)
        InternalFailure.check(result == 0, "event_assign refused an event's new flags")
    }

    /// Called from the callback of a non-persistent event: libevent made it non-pending.
    func firedOnce() { isPending = false }
}

private let portRunLoopEventCallbackPointer: event_callback_fn = { fd, what, context in
    guard let context else { return }
    // Borrowed for the call, not retained: the receiver's `LoopEvent` holds it until the owner
    // thread detaches it, which never happens inside a callback (callbacks only mark readiness).
    Unmanaged<LibEventReceiver>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.eventFired(EventFlags(rawValue: what)) }
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
