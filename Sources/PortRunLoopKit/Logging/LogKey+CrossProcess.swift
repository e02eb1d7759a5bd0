extension LogKey {
    /// The name a cross-process port is published under.
    static let portName = "portrunloop.port_name"
    /// The peer process of a cross-process connection (pid, uid, gid).
    static let peer = "portrunloop.peer"
    /// Why a cross-process connection ended or a frame was refused.
    static let reason = "portrunloop.reason"
    /// How many times an operation has failed so far (an aggregated log entry).
    static let failures = "portrunloop.failures"
}
