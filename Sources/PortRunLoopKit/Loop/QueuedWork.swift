import DequeModule
import Foundation
import Synchronization

/// One item on a loop's work queue: a `perform` block, a synchronous call, or internal control work.
struct QueuedWork {
    enum Kind {
        case block(@Sendable () -> Void)
        case call(any SynchronousCallProtocol)
    }

    var modes: ModeSet
    var kind: Kind

    func matches(_ mode: RunLoop.Mode, commonModes: Set<RunLoop.Mode>) -> Bool {
        if case .call = kind, mode == .synchronousWait { return true }
        return modes.contains(mode, commonModes: commonModes)
    }
}

/// What producers on other threads hand to a loop. Guarded by ``PortRunLoop``'s inbox mutex.
///
/// The `parked` flag is the heart of "one wake signal per batch": the owner sets it (under the
/// lock, after finding the inbox empty) just before it blocks in libevent, and the first producer
/// that finds it set clears it and rings the doorbell. Everyone else only appends. Because setting
/// and testing happen under the same lock, no wake-up can be lost, and no extra fences are needed.
struct Inbox {
    var work: Deque<QueuedWork> = []
    var readyPorts: [MessagePort] = []
    var parked = false
    var wakePending = false
    var stopRequested = false
    var runDepth = 0
    var isShutDown = false

    var hasWork: Bool { !work.isEmpty || !readyPorts.isEmpty || wakePending || stopRequested }

    /// Marks work available; returns true when the caller must ring the doorbell.
    @inline(__always) mutating func takeRingDuty() -> Bool {
        if parked { parked = false; return true }
        return false
    }
}

/// A synchronous call queued on a loop (``PortRunLoop/performAndWait(timeout:_:)``).
protocol SynchronousCallProtocol: AnyObject, Sendable {
    /// Runs the body on the owner thread unless the call was cancelled.
    func run()
    /// Completes the call with `error` unless it already started.
    func fail(_ error: PortRunLoopError)
}
