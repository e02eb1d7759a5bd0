import Foundation

extension StreamListener {
    /// Listens on `endpoint` for a ``RunLoopThreadGroup``: the group's first loop accepts, and the
    /// connections go round-robin to all its loops (the first included), each served, with its
    /// handlers, on its own loop's thread. The same as
    /// `StreamListener(on:loop: group.loops[0], ..., distributingTo: group.loops)`.
    ///
    /// The alternative is one listener per loop on the same port, each with
    /// ``Options/reusePort`` (`SO_REUSEPORT`): the kernel then spreads new connections over the
    /// listeners by a hash of their addresses, with no hand-off between threads, but not evenly
    /// for a handful of clients, and a listener's backlog is not shared with the others.
    ///
    /// - Parameters:
    ///   - endpoint: where to listen.
    ///   - group: the loops that serve the connections in turn; the first also accepts.
    ///   - options: the listener's options, and its connections'.
    ///   - modes: the modes the listener accepts in and its connections are served in.
    ///   - onConnection: runs on the serving loop's thread with each new connection.
    /// - Throws: what ``init(on:loop:options:inModes:distributingTo:onConnection:)`` throws.
    ///
    /// Thread-safety: any thread.
    public convenience init(on endpoint: SocketEndpoint, group: RunLoopThreadGroup, options: Options = Options(),
                            inModes modes: [RunLoop.Mode] = [.common],
                            onConnection: @escaping @Sendable (StreamConnection) -> Void) throws(StreamConnectionError) {
        try self.init(on: endpoint, loop: group.loops[0], options: options, inModes: modes,
                      distributingTo: group.loops, onConnection: onConnection)
    }
}
