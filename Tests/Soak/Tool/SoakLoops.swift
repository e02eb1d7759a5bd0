import Foundation
import PortRunLoopKit
import Synchronization

/// Every loop the soak makes, held weakly: a loop whose thread ended must be freed (its epoll
/// instance, doorbell and timer descriptors closed) once nothing uses it, so the number still
/// alive is a report figure, and any left after the teardown is a leak.
///
/// Thread-safety: any thread.
enum SoakLoops {
    private final class Entry: @unchecked Sendable {
        let name: String
        weak var loop: PortRunLoop?
        init(_ name: String, _ loop: PortRunLoop) { self.name = name; self.loop = loop }
    }

    private static let entries = TracedMutex<[Entry]>([])

    /// A new `RunLoopThread`, tracked.
    static func thread(_ name: String) throws -> RunLoopThread {
        let thread = try RunLoopThread(name: name)
        track(thread.loop, name)
        return thread
    }

    /// Tracks `loop`, made by the soak under `name`.
    static func track(_ loop: PortRunLoop, _ name: String) {
        entries.withLock { $0.append(Entry(name, loop)) }
    }

    /// The names of the tracked loops still alive (the freed ones are forgotten).
    static var alive: [String] {
        entries.withLock { entries in
            entries.removeAll { $0.loop == nil }
            return entries.map(\.name)
        }
    }
}
