import Synchronization

/// The waiting half every blocking call shares (``PortRunLoop/performAndWait(timeout:_:)`` through
/// ``SynchronousCall``, ``ThreadNotificationCenter/postAndWait(_:timeout:)`` through
/// ``SynchronousPost``): one completion word, and the one wait loop.
///
/// The wait loop, on the calling thread:
/// - A caller whose loop is alive waits *serving*: it runs its loop's private `.synchronousWait`
///   mode, in which synchronous work addressed to it (other threads' `performAndWait` calls and
///   `postAndWait` deliveries) still runs, so two loop threads waiting on each other both return.
///   That private run is not the run a `stop()` is meant for (``PortRunLoop/stopInnermostUserRun()``):
///   a stop arriving meanwhile ends the caller's own run after the call returns.
///   The wait is registered in ``BlockingWaits`` (the wait-for graph that breaks cycles through
///   full ports).
/// - A caller without a loop, or whose loop is shut down (a deinit run by its shutdown), spins as
///   its thread's ``WaitSpin`` allows and then sleeps in the ``ParkingLot``, keyed by the call.
/// - At the deadline the subclass withdraws what has not started (``deadlinePassed()``); the wait
///   then goes on, without a deadline, for what has started: a started handler always finishes
///   before the call returns.
///
/// Completion word: bit 0 = complete, bit 1 = the waiter may be asleep in the parking lot. Both
/// sides change it with one atomic read-modify-write, so either the completer sees bit 1 and wakes
/// the lot, or the waiter sees bit 0 before it sleeps: no wake-up is lost. Whatever the completer
/// wrote before ``complete()`` is visible to the waiter once ``isComplete`` is true (release, then
/// acquire).
///
/// Thread-safety: `@unchecked Sendable` (for its subclasses, which document their own state); its
/// own fields are atomic or immutable.
class BlockingCall: @unchecked Sendable {
    private let word = Atomic<UInt8>(0)
    /// The caller's loop, if its thread has one (it is woken through it).
    let waiterLoop: PortRunLoop?
    /// When the call completed (monotonic seconds, as the bits of a `Double`), for a waiter without
    /// a loop (``WaitSpin``). Atomic: two settlers of a post may both find it complete.
    private let completedAt = Atomic<UInt64>(0)

    init(waiter: PortRunLoop?) {
        self.waiterLoop = waiter
    }

    private var key: UnsafeRawPointer { UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()) }

    /// True once ``complete()`` was called (acquiring).
    final var isComplete: Bool { word.load(ordering: .acquiring) & 1 != 0 }

    /// Marks the call complete and wakes its waiter (once; later calls do nothing).
    ///
    /// A waiter whose loop runs on this very thread is not woken: this code runs inside its wait
    /// (a reply read by the wait's own fd source or spin), which looks at ``isComplete`` after
    /// every handler and every spin that found something, before it would sleep again. Waking it
    /// would take its inbox lock and make its next turn take it again, for nothing.
    final func complete() {
        if waiterLoop == nil { completedAt.store(System.monotonicSeconds().bitPattern, ordering: .relaxed) }
        let before = word.bitwiseOr(1, ordering: .acquiringAndReleasing).oldValue
        guard before & 1 == 0 else { return }
        if before & 2 != 0 {
            ParkingLot.wakeAll(key: key)
        } else if let loop = waiterLoop, !loop.isCurrentThread {
            loop.wakeUp()
        }
    }

    /// The deadline passed before completion: withdraw what has not started, and ``complete()`` if
    /// nothing is left to wait for. Called once, on the waiting thread.
    func deadlinePassed() {}

    /// The one wait loop (see the type's comment): returns once the call is complete. `targets` are
    /// the loops the call waits on, for ``BlockingWaits`` (none for a request to another process):
    /// evaluated only when the waiter has a loop (a waiter without one cannot be in a cycle), so a
    /// call from a plain thread makes no array.
    final func waitUntilComplete(deadline initialDeadline: Double, on targets: @autoclosure () -> [PortRunLoop]) {
        // A loop thread serves calls while it waits, but delivers no port messages: a send blocked
        // on its full port is broken rather than left waiting forever (BlockingWaits). A wait on
        // no loop (a request answered by another process) adds no edge to that graph, and is not
        // registered: as the thread's innermost wait it would hide the call it may be nested in,
        // which still blocks the thread on its callee.
        let blockingWait = waiterLoop.flatMap { loop -> BlockingWait? in
            let targets = targets()
            return targets.isEmpty ? nil : BlockingWaits.shared.enter(loop, on: targets, isSend: false)
        }
        defer { if let blockingWait { BlockingWaits.shared.leave(blockingWait) } }
        var deadline = initialDeadline
        while !isComplete {
            if let loop = waiterLoop, !loop.ownerShutDown {
                _ = loop.runSpecific(mode: .synchronousWait, deadline: deadline,
                                     returnAfterSourceHandled: false, until: { self.isComplete })
            } else {
                sleep(until: deadline)
            }
            if isComplete { return }
            if System.monotonicSeconds() >= deadline {
                deadlinePassed()
                deadline = .infinity
            }
        }
    }

    /// Spins, then parks in the lot until complete or `deadline`.
    private func sleep(until deadline: Double) {
        let spin = WaitSpin.current
        let start = System.monotonicSeconds()
        if spin.spin(from: start, until: deadline, for: { self.isComplete }) { return }
        let sleepStart = System.monotonicSeconds()
        word.bitwiseOr(2, ordering: .acquiringAndReleasing)
        let done = ParkingLot.park(key: key, deadline: deadline) { self.isComplete }
        // How soon the call was answered, not counting this thread's own wake-up.
        if waiterLoop == nil {
            let answeredAt = Double(bitPattern: completedAt.load(ordering: .relaxed))
            spin.record(answeredAfter: done ? answeredAt - sleepStart : .infinity)
        }
    }
}
