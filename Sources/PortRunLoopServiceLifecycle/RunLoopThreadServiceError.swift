/// Why a ``RunLoopThreadService`` failed, besides the error of the thread's own start (which the
/// service rethrows as it is, usually a `PortRunLoopError`).
///
/// Thread-safety: a value type; `Sendable`.
public enum RunLoopThreadServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The thread ended before graceful shutdown or cancellation asked the service to stop it:
    /// something else called its `stop()` (code running on the thread, or another holder of an
    /// adopted thread), or an adopted thread was already stopped when the service started.
    case threadEndedUnexpectedly(threadName: String)
    /// `run()` was called on a service that had already been run: a service runs, and stops, its
    /// thread once.
    case alreadyRun

    /// A sentence saying what happened.
    ///
    /// Thread-safety: a value type.
    public var description: String {
        switch self {
        case .threadEndedUnexpectedly(let name):
            "the RunLoopThread '\(name)' ended before the service was asked to stop it"
        case .alreadyRun:
            "the RunLoopThreadService was already run (a service runs its thread once)"
        }
    }
}
