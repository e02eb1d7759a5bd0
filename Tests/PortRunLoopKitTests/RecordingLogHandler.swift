import Logging

/// A `LogHandler` for tests: records every entry (at every level) in a shared ``LogRecorder``.
struct RecordingLogHandler: LogHandler {
    let recorder: LogRecorder
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        recorder.record(LogRecorder.Entry(level: event.level, message: "\(event.message)",
                                          metadata: metadata.merging(event.metadata ?? [:]) { $1 }))
    }
}

/// The entries a ``RecordingLogHandler`` recorded, readable from any thread.
final class LogRecorder: Sendable {
    struct Entry: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: Logger.Metadata

        /// The metadata value for `key`, as a string.
        subscript(key: String) -> String? { metadata[key].map { "\($0)" } }
    }

    private let storage = Locked<[Entry]>([])

    /// A logger that records here.
    var logger: Logger { Logger(label: "test") { _ in RecordingLogHandler(recorder: self) } }

    var entries: [Entry] { storage.withLock { $0 } }

    func record(_ entry: Entry) { storage.withLock { $0.append(entry) } }
}

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
