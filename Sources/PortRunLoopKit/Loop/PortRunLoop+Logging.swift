import Logging

extension PortRunLoop {
    /// Where this loop logs its rare events: blocks discarded when it shuts down (`.notice`, with
    /// the count), an fd source the kernel refused (`.warning`, with the fd and the error), and
    /// what its ports and ``RunLoopThread`` log when they were given no logger of their own. Nothing
    /// is logged per message, perform or turn.
    ///
    /// The default logs nothing: a logger labelled "PortRunLoop" whose handler drops every entry
    /// (``RunLoopThread/init(name:logger:)`` sets it for its loop). A change made from another
    /// thread reaches the loop's thread when that thread next collects work; the loop keeps a copy
    /// there and takes no lock per turn to read it.
    ///
    /// Thread-safety: any thread.
    public var logger: Logger {
        get { inbox.withLock { $0.logger } }
        set {
            if isCurrentThread { ownerLogger = newValue }
            inbox.withLock { inbox in
                inbox.logger = newValue
                inbox.loggerChanged = true
            }
        }
    }

    /// The logger to use from the loop's own thread (its copy) or from any other (the shared one).
    var currentLogger: Logger { isCurrentThread ? ownerLogger : logger }
}
