import Foundation
import Logging
import ServiceContextModule
import Synchronization

/// One item on a loop's work queue: a `perform` block, a synchronous call, internal control work,
/// or a Swift concurrency job (the loop is an executor: Loop/Concurrency/PortRunLoop+Executor.swift).
struct QueuedWork {
    enum Kind {
        case block(@Sendable () -> Void)
        case call(any QueuedCall)
        /// An executor job (actor or task-executor). Never nests inside another job; at shutdown
        /// it fails over to the loop's after-shutdown queue instead of being discarded.
        case job(LoopJob)
        /// A port went from empty to non-empty: deliver its messages (or, when the port is not in
        /// the running mode, keep it pending). Being an item in the same queue as `perform`
        /// blocks is what makes a message sent before a block be handled before that block.
        case portReady(MessagePort)
        /// Bookkeeping asked for from another thread (a port, timer, fd source, custom source or
        /// observer added, removed or re-armed; the common modes changed): applied in every mode and
        /// at shutdown, and never a handled source. What it registers is one when it fires: adding
        /// a source from another thread does not end a `run(mode:before:)` by itself (R3), as
        /// CFRunLoop's locked registration does not.
        case registration(@Sendable () -> Void)
    }

    var modes: ModeSet
    var kind: Kind
    /// The context of the caller that queued a block or a synchronous call, restored around it on
    /// the loop's thread (``CallerContext``); nil for the library's own work and for executor jobs
    /// (a task carries its own).
    var context: CapturedContext?

    init(modes: ModeSet, kind: Kind, context: CapturedContext? = nil) {
        self.modes = modes
        self.kind = kind
        self.context = context
    }
}

/// Whether queued work belongs to a mode, with the per-mode facts worked out once, for a pass over
/// the queue.
///
/// The hot path of every perform: `ModeSet.contains` for `.common` asks whether the running mode is
/// one of the common modes, which hashes the mode's string (a third of the loop's per-block cost
/// in a profile of a perform burst). A filter is given the answer once per pass instead, and the
/// loop keeps it from pass to pass (``PortRunLoop/workFilter(for:jobsMayStart:)``). It holds no
/// reference (neither the mode's string nor the set of common modes): making and dropping one
/// retains and releases nothing. The running mode is passed to ``admits(_:in:)`` by the caller,
/// which holds it anyway.
struct WorkFilter {
    /// The running mode is one of the common modes.
    let modeIsCommon: Bool
    /// The running mode is `.synchronousWait`.
    let isSynchronousWait: Bool
    /// False while an executor job is on this thread's stack (jobs never nest).
    let jobsMayStart: Bool

    /// Whether `work` belongs to `mode`, the mode the filter was made for.
    @inline(__always) func matches(_ work: QueuedWork, in mode: RunLoop.Mode) -> Bool {
        switch work.kind {
        case .call(let call) where isSynchronousWait && call.servedWhileWaiting: return true
        // Taken in a run of a mode the port may be in: delivered now, or moved to the pending
        // ports. A wait's private mode delivers no port: the item keeps its place in the queue.
        case .portReady: return !isSynchronousWait
        default:
            switch work.modes {
            case .common: return modeIsCommon
            case .all: return true
            case .some(let set): return set.contains(mode) || (modeIsCommon && set.contains(.common))
            }
        }
    }

    /// Whether `work` may run now in `mode` (the mode the filter was made for): it belongs to the
    /// mode and, if it is an executor job, no job is running on this thread.
    @inline(__always) func admits(_ work: QueuedWork, in mode: RunLoop.Mode) -> Bool {
        if !jobsMayStart, case .job = work.kind { return false }
        return matches(work, in: mode)
    }
}

/// What a loop worked out about the mode it runs, kept from pass to pass (see
/// ``PortRunLoop/workFilter(for:jobsMayStart:)``).
///
/// Thread-safety: a value.
struct ModeFacts {
    let mode: RunLoop.Mode
    /// One of the common modes.
    let isCommon: Bool
    /// The private mode of the library's blocking waits (`.synchronousWait`).
    let isSynchronousWait: Bool
}

/// What producers on other threads hand to a loop. Guarded by ``PortRunLoop``'s inbox mutex.
///
/// The `parked` flag is the heart of "one wake signal per batch": the owner sets it (under the
/// lock, after finding the inbox empty) just before it blocks in libevent, and the first producer
/// that finds it set clears it and rings the doorbell. Everyone else only appends. Because setting
/// and testing happen under the same lock, no wake-up can be lost, and no extra fences are needed.
struct Inbox: ~Copyable {
    var work = HandoffQueue<QueuedWork>()
    var parked = false
    /// When the producer that found the loop parked rang its doorbell (monotonic seconds), for
    /// ``IdleSpin``; read and reset by the loop when it unparks.
    var rangAt: Double?
    var wakePending = false
    /// The epoch of the run a `stop()` from another thread was addressed to (0: none); see
    /// ``PortRunLoop/runningEpoch``.
    var stopRequestEpoch: UInt64 = 0
    var isShutDown = false
    /// Who is told of the shutdown (``PortRunLoop/whenShutDown(notifying:_:)``); taken when it begins.
    var shutDownHooks: [ShutDownHook] = []
    /// The modes `RunLoop.Mode.common` stands for (``PortRunLoop/commonModes``); the owner works
    /// from its copy, ``PortRunLoop/ownerCommonModes``.
    var commonModes: Set<RunLoop.Mode> = [.default]
    /// ``PortRunLoop/metricsDelegate`` as last set, and whether the owner has yet to take it.
    var metricsDelegate: (any LoopMetricsDelegate)?
    var metricsDelegateChanged = false
    /// ``PortRunLoop/logger`` as last set, and whether the owner has yet to take it (it does when
    /// it next collects work; no wake is needed for it).
    var logger: Logger
    var loggerChanged = false
    /// Set at shutdown if executor jobs remain or arrive: the serial queue they fail over to.
    var afterShutdownJobs: DispatchQueue?
    /// The loop's task executor while anything holds it (one identity for all its users).
    weak var taskExecutor: RunLoopTaskExecutor?

    var hasWork: Bool { !work.isEmpty || wakePending || stopRequestEpoch != 0 || metricsDelegateChanged }

    /// Marks work available; returns true when the caller must ring the doorbell.
    @inline(__always) mutating func takeRingDuty() -> Bool {
        if parked {
            parked = false
            rangAt = System.monotonicSeconds()
            return true
        }
        return false
    }
}

/// Work the loop either runs or fails, never drops: a `performAndWait` (``SynchronousCall``), a
/// `submit` (``AsyncCall``), a synchronous post's drain (``LaneSyncCall``), a lane's drain
/// (``LaneDrain``). A loop that shuts down with such work queued calls ``fail(_:)``, so whoever
/// waits for it (a thread, a task, a lane's deliveries) is told.
protocol QueuedCall: AnyObject, Sendable {
    /// Whether it also runs while its loop's thread waits in a blocking call of its own (the
    /// private `.synchronousWait` mode): synchronous work does, so that threads waiting on each
    /// other serve each other; asynchronous deliveries wait until the blocking call returns.
    var servedWhileWaiting: Bool { get }
    /// Runs on the owner thread unless it was withdrawn.
    func run()
    /// Completes it with `error` unless it already started.
    func fail(_ error: PortRunLoopError)
}
