import Logging

/// A `LogHandler` for tests: records every entry in a shared ``LogRecorder``.
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

        subscript(key: String) -> String? { metadata[key].map { "\($0)" } }
    }

    private let storage = Locked<[Entry]>([])

    var logger: Logger { Logger(label: "test") { _ in RecordingLogHandler(recorder: self) } }

    var entries: [Entry] { storage.withLock { $0 } }

    func record(_ entry: Entry) { storage.withLock { $0.append(entry) } }
}
