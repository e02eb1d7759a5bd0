/// The metadata keys the library logs with (as documented in README.md's "Logging" section).
enum LogKeys {
    static let loop = "portrunloop.loop"
    static let port = "portrunloop.port"
    static let discarded = "portrunloop.discarded"
    static let rejected = "portrunloop.rejected"
    static let rejectedSinceLastLog = "portrunloop.rejected_since_last_log"
    static let queueLimit = "portrunloop.queue_limit"
    static let fileDescriptor = "portrunloop.fd"
    static let error = "portrunloop.error"
}
