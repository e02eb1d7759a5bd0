import Foundation

/// What a ``NotificationObservation`` ends: an observer record, a Foundation redirect, a bridge.
protocol ObservationRegistration: Sendable {
    /// False once the registration ended, or its loop shut down (which ends it too, found lazily
    /// by the center's delivery).
    var isObserving: Bool { get }
    /// Ends the registration: once this returns, no handler call (or re-post) starts. Idempotent.
    func end()
    /// Waits for handler calls already running; false if `deadline` (monotonic seconds) passed first.
    func waitForRunningHandlers(deadline: Double) -> Bool
}

extension ObserverRecord: ObservationRegistration {
    /// ``isActive``, and the loop is alive: a dead loop's records end at the next post that
    /// reaches them, but no handler of theirs can run from its shutdown on. Takes the loop's lock.
    var isObserving: Bool { isActive && !loop.isShutDown }
}

/// The token for one observation made with a ``ThreadNotificationCenter``: keep it to keep observing.
///
/// The observation ends — exactly once, whichever comes first — when ``remove()`` is called, when the
/// token is released (its deinit removes it), when the observer object given to
/// ``ThreadNotificationCenter/addObserver(_:name:object:on:inModes:_:)`` is deallocated, when
/// ``ThreadNotificationCenter/removeObserver(_:name:object:)`` names it, or when its thread's loop
/// shuts down.
///
/// **Removal guarantee.** Once the call that ends the observation returns, its handler is never
/// started again, on any thread, including for notifications that were already queued for its
/// thread (those are discarded and counted in ``NotificationQueueMetrics/discarded``). A handler
/// call that had already started on the observation's thread at that moment is not interrupted: it
/// runs to completion. ``waitForRunningHandlers(timeout:)`` (or ``removeAndWait(timeout:)``) waits
/// for it; called on the observation's own thread it returns at once, because such a call can only be
/// further down that thread's own stack.
///
/// Thread-safety: `Sendable`; every member is safe from any thread, including from inside the
/// observation's own handler.
public final class NotificationObservation: Sendable, Hashable, CustomStringConvertible {
    private let registration: any ObservationRegistration
    private let label: String

    init(_ registration: any ObservationRegistration, label: String) {
        self.registration = registration
        self.label = label
    }

    deinit { registration.end() }

    /// True until the observation ends. One nuance: an observer object is only ever touched on its
    /// delivery thread (so that its deinit can never be triggered from here), so an observation
    /// whose observer object was deallocated reports false from the first delivery attempted after
    /// that — its handler can never run again either way.
    ///
    /// Thread-safety: any thread.
    public var isActive: Bool { registration.isObserving }

    /// Ends the observation. Once this returns, its handler never starts again (see the removal
    /// guarantee above). Idempotent.
    ///
    /// Thread-safety: any thread, including from inside the handler.
    public func remove() { registration.end() }

    /// Waits until no handler call of this observation is running, or `timeout` passes (nil: no
    /// limit). Returns false on timeout. On the observation's own thread it returns true at once.
    /// Combined with ``remove()`` this gives "no handler is running and none will start". Do not
    /// call it with no timeout from a thread the running handler itself waits for (for example with
    /// `performAndWait`): the two would wait for each other.
    ///
    /// Thread-safety: any thread.
    @discardableResult
    public func waitForRunningHandlers(timeout: Duration? = nil) -> Bool {
        registration.waitForRunningHandlers(deadline: timeout.map { System.monotonicSeconds() + $0.seconds } ?? .infinity)
    }

    /// ``remove()``, then ``waitForRunningHandlers(timeout:)``.
    ///
    /// Thread-safety: any thread.
    @discardableResult
    public func removeAndWait(timeout: Duration? = nil) -> Bool {
        remove()
        return waitForRunningHandlers(timeout: timeout)
    }

    /// Tokens are equal only to themselves.
    ///
    /// Thread-safety: any thread.
    public static func == (lhs: NotificationObservation, rhs: NotificationObservation) -> Bool { lhs === rhs }

    /// Hashes the token's identity.
    ///
    /// Thread-safety: any thread.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// Thread-safety: any thread.
    public var description: String { "NotificationObservation(\(label), active: \(isActive))" }
}
