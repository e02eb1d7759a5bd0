extension PortRunLoop {
    /// Tells `owner`, through `call`, once, on the loop's thread, at the end of the loop's shutdown
    /// (when its thread exits or its ``RunLoopThread`` stops), after its sources were invalidated:
    /// what the library keeps per thread (a notification center's queue for it) is let go of with
    /// the thread. Returns false, keeping nothing, when the loop is already shut down: the caller
    /// lets go at once.
    ///
    /// `owner` is held weakly: a hook whose owner is gone is never called, and is dropped the next
    /// time a hook is added, so a long-lived loop keeps at most one per live owner. `call` must not
    /// hold the owner (nor the loop) strongly.
    ///
    /// Thread-safety: any thread.
    func whenShutDown(notifying owner: any AnyObject & Sendable,
                      _ call: @escaping @Sendable (any AnyObject & Sendable) -> Void) -> Bool {
        inbox.withLock { inbox in
            guard !inbox.isShutDown else { return false }
            inbox.shutDownHooks.removeAll { $0.owner == nil }
            inbox.shutDownHooks.append(ShutDownHook(owner: owner, body: call))
            return true
        }
    }
}

/// One party told of a loop's shutdown (``PortRunLoop/whenShutDown(notifying:_:)``).
///
/// Thread-safety: kept in the loop's inbox, under its lock; called on the loop's thread.
struct ShutDownHook: Sendable {
    weak var owner: (any AnyObject & Sendable)?
    let body: @Sendable (any AnyObject & Sendable) -> Void

    /// Calls `body` with the owner, if it is still there.
    func call() {
        if let owner { body(owner) }
    }
}
