import Glibc

/// hiredis writes to its sockets with `write(2)`, which raises SIGPIPE when the server has closed
/// the connection (killed, restarted) while output was pending; SIGPIPE's default action ends the
/// process. Before the first Redis connection, the transport therefore sets SIGPIPE to "ignore" —
/// only if it still has its default action (a program's own handler or choice is left alone) — so
/// that such a write fails with `EPIPE`, which hiredis reports as a lost connection. Documented in
/// <doc:RedisNotifications> ("Operations").
///
/// Thread-safety: a stateless namespace; ``ignoreIfDefault()`` is idempotent and runs its work once.
enum BrokenPipeSignal {
    /// Ignores SIGPIPE unless the program chose its disposition; returns whether it changed it.
    @discardableResult
    static func ignoreIfDefault() -> Bool { changed }

    private static let changed: Bool = {
        var current = sigaction()
        guard sigaction(SIGPIPE, nil, &current) == 0, current.__sigaction_handler.sa_handler == nil else { return false }
        var ignore = sigaction()
        ignore.__sigaction_handler.sa_handler = SIG_IGN
        sigemptyset(&ignore.sa_mask)
        return sigaction(SIGPIPE, &ignore, nil) == 0
    }()
}
