import Synchronization

/// One ``PortRunLoop/performAndWait(timeout:_:)`` in flight: one allocation (this object), nothing
/// else per call. Not generic: the body writes the caller's result slot itself (see
/// ``PortRunLoop/runAndWait(timeout:_:)``), so no call needs a generic type's metadata.
///
/// State machine: pending → claimed → complete (finished or withdrawn). Whoever claims it (one
/// compare-exchange of `claimed`) owns the body from then on: the loop's thread to run it, or the
/// waiter (timeout) or the loop (shutdown) to withdraw it. The owner drops the body, writes the
/// error if it withdrew it, and publishes with ``BlockingCall/complete()`` (releasing); the waiter
/// reads the error and the result slot the body wrote once ``BlockingCall/isComplete``
/// (acquiring). The body is dropped before completion, which `withoutActuallyEscaping` requires:
/// once the waiter returns, nothing may refer to it. The wait itself is ``BlockingCall``'s.
///
/// Thread-safety: `@unchecked Sendable`; `body` and `error` are guarded by the claim as above. The
/// body runs on the target loop's thread only.
final class SynchronousCall: BlockingCall, QueuedCall, @unchecked Sendable {
    private let claimed = Atomic<Bool>(false)
    private var body: (() -> Void)?
    private var error: PortRunLoopError?

    /// `body` is taken, not copied: the call owns it from here (no retain of the caller's closure).
    @inline(__always)
    init(body: consuming @escaping () -> Void, waiter: PortRunLoop?) {
        self.body = body
        super.init(waiter: waiter)
    }

    var servedWhileWaiting: Bool { true }

    private func claim() -> Bool {
        claimed.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
    }

    func run() {
        guard claim() else { return }
        // Taken out, called and released inside this function, before completion is published.
        take(&body)!()
        complete()
    }

    func fail(_ error: PortRunLoopError) {
        guard claim() else { return }
        body = nil
        self.error = error
        complete()
    }

    /// At the deadline a call that has not started is withdrawn with ``PortRunLoopError/timedOut``;
    /// one that has started is waited for.
    override func deadlinePassed() { fail(.timedOut) }

    /// Throws the error the call was withdrawn with; returns when its body ran.
    func checkRan() throws(PortRunLoopError) {
        InternalFailure.check(isComplete, "synchronous call checked before completion")
        if let error { throw error }
    }
}

/// Moves the value out of `value`, leaving nil.
@inline(__always) private func take<V>(_ value: inout V?) -> V? {
    defer { value = nil }
    return value
}
