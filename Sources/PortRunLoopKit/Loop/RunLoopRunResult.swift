/// Why a single run of a ``PortRunLoop`` returned (CFRunLoopRunInMode's result codes).
///
/// Thread-safety: a value type; `Sendable`.
public enum RunLoopRunResult: Sendable, Equatable {
    /// The mode had no ports, fd sources, timers or queued work for it.
    case finished
    /// ``PortRunLoop/stop()`` ended this run.
    case stopped
    /// The timeout passed.
    case timedOut
    /// A source was handled and the run was asked to return after one.
    case handledSource
}
