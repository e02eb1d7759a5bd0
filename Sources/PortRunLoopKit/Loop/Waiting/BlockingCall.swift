import Foundation
import Synchronization

/// The package's one blocking wait: the way a thread waits for something another thread does. Every
/// wait is a one-shot completion made for it (a subclass, or a ``BlockingCall`` itself) that the
/// other side completes: a `performAndWait` (``SynchronousCall``), a `postAndWait`
/// (``SynchronousPost``), a cross-process request's reply (``ReplyWait``), a thread's start and end
/// (``RunLoopThread``), an outcome another package module waits for (a bus transport's
/// subscription, connection or flush). State that many threads wait on (a port's room, a gate's
/// handlers) keeps a list of these completions and completes them all when it changes; each waiter
/// looks again and, if it must go on waiting, makes a new one.
///
/// The wait loop, on the calling thread:
/// - A caller whose loop is alive waits *serving*: it runs its loop in a private mode (`serving`,
///   `.synchronousWait` unless the wait names another), in which synchronous work addressed to it
///   (other threads' `performAndWait` calls and `postAndWait` deliveries) still runs, so two loop
///   threads waiting on each other both return. A wait that must not run anything of its loop (a
///   send waiting for room: M9) is made with `serving: nil` and sleeps as a thread without a loop
///   does.
///   That private run is not the run a `stop()` is meant for (``PortRunLoop/stopInnermostUserRun()``):
///   a stop arriving meanwhile ends the caller's own run after the call returns.
///   The wait is registered in ``BlockingWaits`` (the wait-for graph that breaks cycles through
///   full ports).
/// - A caller without a loop, or whose loop is shut down (a deinit run by its shutdown), or that
///   must not run it, spins as its thread's ``WaitSpin`` allows and then sleeps in the
///   ``ParkingLot``, keyed by the call. A completion that such a thread must bring about itself
///   (a reply on a socket nobody else reads) says how it looks while it spins and how it sleeps
///   (``lookWhileSpinning()``, ``sleepWithoutServing(from:until:unless:)``): a request to another
///   process polls its connection's socket.
/// - At the deadline the subclass withdraws what has not started (``deadlinePassed()``); the wait
///   then goes on, without a deadline, for what has started: a started handler always finishes
///   before the call returns.
/// - The async form, ``waitAsync()``, suspends the calling task instead of blocking its thread; a
///   cancellation of the task withdraws what has not started (``cancelled()``, which is the
///   deadline's withdrawal unless a subclass says otherwise) and waits for what has.
///
/// Completion word: bit 0 = complete, bit 1 = the waiter may be asleep in the parking lot, bit 2 =
/// a task is suspended on it. Both sides change it with one atomic read-modify-write, so either
/// the completer sees bit 1 (or 2) and wakes the lot (or resumes the task), or the waiter sees
/// bit 0 before it sleeps (or resumes itself): no wake-up is lost, and a task is resumed exactly
/// once. Whatever the completer wrote before ``complete()`` is visible to the waiter once
/// ``isComplete`` is true (release, then acquire).
///
/// Thread-safety: `@unchecked Sendable` (for its subclasses, which document their own state); its
/// own fields are atomic or immutable. Complete it from any thread; wait on it from one.
package class BlockingCall: @unchecked Sendable {
    private let word = Atomic<UInt8>(0)
    /// The caller's loop, if its thread has one: registered in ``BlockingWaits`` while it waits,
    /// and, when `servingMode` is set, served and woken through.
    let waiterLoop: PortRunLoop?
    /// The private mode the waiter's loop runs while it waits, or none (the thread sleeps in the
    /// ``ParkingLot``). The usual mode is a case of its own, not a string: a call then has no
    /// string to release when it is freed.
    private let serving: Serving
    /// The waiter brings the completion about itself while it spins and sleeps
    /// (``lookWhileSpinning()``, ``sleepWithoutServing(from:until:unless:)`` overridden): only
    /// then are those called; every other wait tests ``isComplete`` and parks directly.
    private let waitsByItself: Bool
    /// When the call completed (monotonic seconds, as the bits of a `Double`), for a waiter without
    /// a loop (``WaitSpin``). Atomic: two settlers of a post may both find it complete.
    private let completedAt = Atomic<UInt64>(0)
    /// The task suspended in ``waitAsync()``: written by it before it sets bit 2, read by the
    /// completer that saw bit 2 (release, then acquire), so never by both.
    @exclusivity(unchecked) private var suspended: UnsafeContinuation<Void, Never>?

    private enum Serving {
        case none
        case synchronousWait
        case mode(RunLoop.Mode)

        var mode: RunLoop.Mode? {
            switch self {
            case .none: nil
            case .synchronousWait: .synchronousWait
            case .mode(let mode): mode
            }
        }
    }

    /// A completion waited for by the calling thread's loop, if it has one (`waiter`), which runs
    /// `serving` meanwhile (nil: it sleeps instead). `waitsByItself`: the subclass overrides
    /// ``lookWhileSpinning()`` and ``sleepWithoutServing(from:until:unless:)``.
    @inline(__always)
    init(waiter: PortRunLoop?, serving: RunLoop.Mode? = .synchronousWait, waitsByItself: Bool = false) {
        self.waiterLoop = waiter
        self.serving = switch serving {
        case _ where waiter == nil: .none
        case nil: .none
        case .synchronousWait?: .synchronousWait
        case let mode?: .mode(mode)
        }
        self.waitsByItself = waitsByItself
    }

    private var servesLoop: Bool {
        if case .none = serving { false } else { true }
    }

    private var key: UnsafeRawPointer { UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()) }

    /// True once ``complete()`` was called (acquiring).
    package final var isComplete: Bool { word.load(ordering: .acquiring) & 1 != 0 }

    /// Marks the call complete and wakes its waiter (once; later calls do nothing).
    ///
    /// A waiter whose loop runs on this very thread is not woken: this code runs inside its wait
    /// (a reply read by the wait's own fd source or spin), which looks at ``isComplete`` after
    /// every handler and every spin that found something, before it would sleep again. Waking it
    /// would take its inbox lock and make its next turn take it again, for nothing.
    package final func complete() {
        if !servesLoop { completedAt.store(System.monotonicSeconds().bitPattern, ordering: .relaxed) }
        let before = word.bitwiseOr(1, ordering: .acquiringAndReleasing).oldValue
        guard before & 1 == 0 else { return }
        if before & 4 != 0 {
            let task = suspended
            suspended = nil
            task?.resume()
        } else if before & 2 != 0 {
            ParkingLot.wakeAll(key: key)
        } else if servesLoop, let loop = waiterLoop, !loop.isCurrentThread {
            loop.wakeUp()
        }
    }

    /// The deadline passed before completion (or the waiting task was cancelled, ``cancelled()``):
    /// withdraw what has not started, and ``complete()`` if nothing is left to wait for. Called on
    /// the waiting thread at the deadline, or on the cancelling thread; it may meet a completion
    /// under way, so what it does must be idempotent with it.
    package func deadlinePassed() {}

    /// The task in ``waitAsync()`` was cancelled before completion: by default what the deadline
    /// does (``deadlinePassed()``). Called once, on whatever thread cancelled the task.
    package func cancelled() { deadlinePassed() }

    /// The one wait's async form: returns once the call is complete, suspending the task (not
    /// blocking its thread) meanwhile. A cancellation of the task calls ``cancelled()``, and the
    /// wait goes on until that, or whoever had started, completes the call. Call it once, instead
    /// of ``waitUntilComplete(deadline:on:isSend:servingLoop:)``.
    package final func waitAsync() async {
        if isComplete { return }
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (task: UnsafeContinuation<Void, Never>) in
                suspended = task
                if word.bitwiseOr(4, ordering: .acquiringAndReleasing).oldValue & 1 != 0 {
                    // Completed first: the completer did not see bit 2 and left `suspended` alone.
                    suspended = nil
                    task.resume()
                }
            }
        } onCancel: {
            if !isComplete { cancelled() }
        }
    }

    /// The one wait loop (see the type's comment): returns once the call is complete, true; or
    /// false at once, without completing, for a send (`isSend`) that would close a cycle of waits
    /// no loop can leave, or that a call closing such a cycle broke (``BlockingWaits``). `targets`
    /// are the loops the call waits on, for ``BlockingWaits`` (none for a request to another
    /// process): evaluated only when the waiter has a loop (a waiter without one cannot be in a
    /// cycle), so a call from a plain thread makes no array.
    ///
    /// `servingLoop: false` keeps a waiter whose loop would serve from running it (a request whose
    /// loop could not watch the connection reads the socket itself instead).
    @discardableResult
    package final func waitUntilComplete(deadline initialDeadline: Double, on targets: @autoclosure () -> [PortRunLoop] = [],
                                         isSend: Bool = false, servingLoop: Bool = true) -> Bool {
        // A loop thread serves calls while it waits, but delivers no port messages: a send blocked
        // on its full port is broken rather than left waiting forever (BlockingWaits). A wait on
        // no loop (a request answered by another process) adds no edge to that graph, and is not
        // registered: as the thread's innermost wait it would hide the call it may be nested in,
        // which still blocks the thread on its callee.
        // One `let`, and no closure over it: a captured `var` (or a closure kept in a local) is a
        // heap allocation per call, on the path of every `performAndWait`.
        let blockingWait: BlockingWait?
        if let loop = waiterLoop, case let loops = targets(), !loops.isEmpty {
            // A broken send is woken through the parking lot: it sleeps there (a send does not
            // serve its loop), and `sleep(until:unless:)` looks at the flag with the slot locked.
            blockingWait = isSend
                ? BlockingWaits.shared.enter(loop, on: loops, isSend: true) { [self] in ParkingLot.wakeAll(key: key) }
                : BlockingWaits.shared.enter(loop, on: loops, isSend: false)
            if isSend && blockingWait == nil { return false }
        } else {
            blockingWait = nil
        }
        defer { if let blockingWait { BlockingWaits.shared.leave(blockingWait) } }
        var deadline = initialDeadline
        while !isComplete {
            if blockingWait?.isBroken == true { return false }
            if servingLoop, let mode = serving.mode, let loop = waiterLoop, !loop.ownerShutDown {
                _ = loop.runSpecific(mode: mode, deadline: deadline,
                                     returnAfterSourceHandled: false, until: { self.isComplete })
            } else {
                sleep(until: deadline, unless: blockingWait)
            }
            if isComplete { return true }
            if blockingWait?.isBroken == true { return false }
            if System.monotonicSeconds() >= deadline {
                deadlinePassed()
                deadline = .infinity
            }
        }
        return true
    }

    /// Spins while that pays (``lookWhileSpinning()`` between yields), then sleeps
    /// (``sleepWithoutServing(from:until:unless:)``) until complete, `graphWait` broken or
    /// `deadline`; a thread without a loop tells its spin how soon the call was answered.
    private func sleep(until deadline: Double, unless graphWait: BlockingWait?) {
        let spin = WaitSpin.current
        let start = System.monotonicSeconds()
        let ownLook = waitsByItself
        if spin.spin(from: start, until: deadline, for: {
            (ownLook ? self.lookWhileSpinning() : self.isComplete) || graphWait?.isBroken == true
        }) { return }
        let sleepStart = System.monotonicSeconds()
        let answeredAfter = ownLook
            ? sleepWithoutServing(from: sleepStart, until: deadline) { graphWait?.isBroken == true }
            : park(from: sleepStart, until: deadline) { graphWait?.isBroken == true }
        if waiterLoop == nil { spin.record(answeredAfter: answeredAfter) }
    }

    /// One look while the waiter spins: true once the wait may end. By default whether the call is
    /// complete; a completion the waiting thread brings about itself does that work here.
    func lookWhileSpinning() -> Bool { isComplete }

    /// The sleep of a thread that does not serve a loop, once its spin found nothing: by default it
    /// parks in the lot until the call is complete, `broken()` or `deadline`. Returns how soon after
    /// `sleepStart` the call was answered, not counting this thread's own wake-up (`.infinity`: it
    /// was not).
    func sleepWithoutServing(from sleepStart: Double, until deadline: Double, unless broken: () -> Bool) -> Double {
        park(from: sleepStart, until: deadline, unless: broken)
    }

    /// ``sleepWithoutServing(from:until:unless:)``'s default: parks in the lot.
    private final func park(from sleepStart: Double, until deadline: Double, unless broken: () -> Bool) -> Double {
        word.bitwiseOr(2, ordering: .acquiringAndReleasing)
        let done = ParkingLot.park(key: key, deadline: deadline) { self.isComplete || broken() }
        guard done, isComplete else { return .infinity }
        return Double(bitPattern: completedAt.load(ordering: .relaxed)) - sleepStart
    }
}
