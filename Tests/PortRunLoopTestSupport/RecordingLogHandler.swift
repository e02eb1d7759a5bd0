import Logging

/// A `LogHandler` for tests: records every entry (at every level) in a shared ``LogRecorder``.
///
/// Thread-safety: `Sendable` (a value; the recorder is thread-safe).
public struct RecordingLogHandler: LogHandler {
    /// Where entries go.
    public let recorder: LogRecorder
    /// The level: `.trace`, so that everything is recorded.
    public var logLevel: Logger.Level = .trace
    /// The logger's own metadata, merged into every entry.
    public var metadata: Logger.Metadata = [:]

    /// A handler recording into `recorder`.
    public init(recorder: LogRecorder) { self.recorder = recorder }

    /// The logger's metadata value for `key`.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Records the entry.
    public func log(event: LogEvent) {
        recorder.record(LogRecorder.Entry(level: event.level, message: "\(event.message)",
                                          metadata: metadata.merging(event.metadata ?? [:]) { $1 }))
    }
}

/// The entries a ``RecordingLogHandler`` recorded, readable from any thread.
///
/// Thread-safety: `Sendable`.
public final class LogRecorder: Sendable {
    /// One recorded entry.
    ///
    /// Thread-safety: `Sendable` (a value).
    public struct Entry: Sendable {
        /// Its level.
        public let level: Logger.Level
        /// Its message.
        public let message: String
        /// The logger's metadata merged with the entry's own.
        public let metadata: Logger.Metadata

        /// The metadata value for `key`, as a string.
        public subscript(key: String) -> String? { metadata[key].map { "\($0)" } }
    }

    private let storage = Locked<[Entry]>([])

    /// An empty recorder.
    public init() {}

    /// A logger that records here.
    public var logger: Logger { Logger(label: "test") { _ in RecordingLogHandler(recorder: self) } }

    /// Everything recorded so far, oldest first.
    public var entries: [Entry] { storage.withLock { $0 } }

    /// Records `entry`.
    public func record(_ entry: Entry) { storage.withLock { $0.append(entry) } }
}
