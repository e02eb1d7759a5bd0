import DequeModule
import Foundation
import Synchronization

/// One item on a loop's work queue: a `perform` block, a synchronous call, internal control work,
/// or a Swift concurrency job (the loop is an executor: Concurrency/PortRunLoop+Executor.swift).
struct QueuedWork {
    enum Kind {
        case block(@Sendable () -> Void)
        case call(any SynchronousCallProtocol)
        /// An executor job (actor or task-executor). Never nests inside another job; at shutdown
        /// it fails over to the loop's after-shutdown queue instead of being discarded.
        case job(LoopJob)
        /// A port went from empty to non-empty: deliver its messages (or, when the port is not in
        /// the running mode, keep it pending). Being an item in the same queue as `perform`
        /// blocks is what makes a message sent before a block be handled before that block.
        case portReady(MessagePort)
    }

    var modes: ModeSet
    var kind: Kind

    func matches(_ mode: RunLoop.Mode, commonModes: Set<RunLoop.Mode>) -> Bool {
        switch kind {
        case .call where mode == .synchronousWait: return true
        case .portReady: return true // always taken: delivered now or moved to the pending ports
        default: return modes.contains(mode, commonModes: commonModes)
        }
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
    var parked = false
    var wakePending = false
    var stopRequested = false
    var runDepth = 0
    var isShutDown = false
    /// Set at shutdown if executor jobs remain or arrive: the serial queue they fail over to.
    var afterShutdownJobs: DispatchQueue?
    /// The loop's task executor while anything holds it (one identity for all its users).
    weak var taskExecutor: RunLoopTaskExecutor?

    var hasWork: Bool { !work.isEmpty || wakePending || stopRequested }

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
