import Foundation

/// Writes one line to standard output at once (unbuffered: the test reads it through a pipe while
/// the probe runs).
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Lines recorded while the group runs, printed at the end. On `NSLock`, which ThreadSanitizer sees
/// (`Synchronization.Mutex` is a futex inside the uninstrumented stdlib on Linux).
final class ProbeLines: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = [] // guarded by `lock`

    func append(_ line: String) { lock.withLock { stored.append(line) } }
    var lines: [String] { lock.withLock { stored } }
}
