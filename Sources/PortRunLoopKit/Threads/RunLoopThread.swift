#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import Synchronization

/// A named thread that runs its own ``PortRunLoop`` until stopped: what a server embeds when work
/// must run on one particular thread.
///
/// The loop keeps running even with nothing scheduled (a private port keeps it alive, the classic
/// Cocoa idiom). ``stop()`` follows one rule: everything queued on the loop before `stop()` was
/// called (perform blocks in the running mode, messages already sent to its ports) is handled; then
/// the loop ends and is shut down, so later `perform` returns false, `performAndWait` throws
/// ``PortRunLoopError/loopShutDown``, sends to its ports return false and messages still queued in
/// them are discarded (and counted). Then the thread exits and `stop()` joins it.
///
/// Releasing the last reference to a running `RunLoopThread` stops it as `stop()` does (logged at
/// `.debug`). Its ``loop`` does not keep it running, and Swift may release an object right after
/// its last use rather than at the end of the scope that holds it: an optimized build can stop a
/// thread whose object a function only read `loop` from. Keep the `RunLoopThread` itself
/// referenced for as long as its loop must run (a stored property, or
/// `withExtendedLifetime(thread) { … }`), or call ``stop()`` where it should end. Give
/// `withExtendedLifetime` a closure that returns: with one that never does (`() -> Never`, a
/// process's endless main loop), an optimized build has released the thread before the closure
/// ran; call it inside that loop instead.
///
/// Thread-safety: `Sendable`; every member is safe from any thread.
public final class RunLoopThread: @unchecked Sendable {
    /// The thread's name (also its kernel name, truncated to 15 bytes).
    ///
    /// Thread-safety: immutable.
    public let name: String
    /// The loop the thread runs.
    ///
    /// Thread-safety: immutable; the loop itself is `Sendable`.
    public let loop: PortRunLoop
    private let thread: pthread_t
    private let lifecycle: Lifecycle

    /// Where the thread is in its life: one state, guarded by one mutex; its start and its end are
    /// waited for with ``BlockingCall``s.
    private enum Phase {
        /// The thread is making its loop.
        case starting
        /// The loop could not be made; the thread has exited.
        case failed(PortRunLoopError)
        /// The thread runs its loop (made on the thread; `init` takes it from here).
        case running(PortRunLoop)
        /// ``stop()`` was called; its request is queued behind the work queued before it.
        case stopping
        /// The stop request ran on the loop: the thread leaves its runs, shuts the loop down, exits.
        case leaving
        /// The thread has exited (or, stopped from itself, is exiting).
        case stopped

        /// Phases only move forward, in declaration order (`failed` and `running` are alternatives).
        var rank: Int {
            switch self {
            case .starting: 0
            case .failed, .running: 1
            case .stopping: 2
            case .leaving: 3
            case .stopped: 4
            }
        }

        var isLeaving: Bool { rank >= Phase.leaving.rank }
        var isStopped: Bool { rank == Phase.stopped.rank }
    }

    /// The phase, in an object the new thread can hold before `self` exists.
    ///
    /// Thread-safety: `Sendable`; the phase and the waits for the thread's end are each behind
    /// their mutex; `started` is a completion.
    private final class Lifecycle: Sendable {
        let phase = TracedMutex(Phase.starting)
        /// Completed when the phase leaves `.starting` (the loop is made, or could not be); `init`
        /// waits for it, serving its own loop meanwhile if it runs on one.
        let started = BlockingCall(waiter: PortRunLoop.existingForCurrentThread())
        /// The ``stop()`` calls waiting for the thread to leave; nil once it has (``leave()``).
        private let endWaits = TracedMutex<[ThreadEnd]?>([])

        /// Moves to `next` unless the phase is already there or beyond.
        func move(to next: Phase) {
            phase.withLock { if next.rank > $0.rank { $0 = next } }
            started.complete()
        }

        /// The thread, as it leaves with its loop shut down: stopped, and every wait for that
        /// completed.
        func leave() {
            move(to: .stopped)
            let waits = endWaits.withLock { waits in
                defer { waits = nil }
                return waits ?? []
            }
            for wait in waits { wait.complete() }
        }

        /// A ``stop()`` from a thread other than the stopping one: returns once the thread has
        /// left. A caller with a loop of its own serves it meanwhile, as a `performAndWait` does
        /// (the stopping thread's remaining work may wait on it: W4, M9); one without sleeps.
        func waitForTheEnd(of loop: PortRunLoop) {
            let wait = ThreadEnd(waiter: PortRunLoop.existingForCurrentThread())
            let waiting = endWaits.withLock { waits -> Bool in
                guard waits != nil else { return false }
                waits!.append(wait)
                return true
            }
            if waiting { wait.waitUntilComplete(deadline: .infinity, on: [loop]) }
        }
    }

    /// A wait for the thread to leave (``Lifecycle/waitForTheEnd(of:)``), completed by the thread.
    ///
    /// Thread-safety: `@unchecked Sendable`: only ``BlockingCall``'s own atomic state.
    private final class ThreadEnd: BlockingCall, @unchecked Sendable {}

    /// Starts a thread named `name` and returns once its loop exists.
    ///
    /// - Parameters:
    ///   - name: the thread's name, also the loop's ``PortRunLoop/name``.
    ///   - logger: becomes the loop's ``PortRunLoop/logger``. The thread logs its loop's start and
    ///     its end (after the shutdown) at `.debug`, with the loop's name, to the loop's logger as
    ///     it is then. The default logs nothing.
    /// - Throws: ``PortRunLoopError/threadCreationFailed(errno:)`` or the loop's creation error.
    ///
    /// Thread-safety: any thread.
    public init(name: String, logger: Logger = .portRunLoopDisabled) throws(PortRunLoopError) {
        let lifecycle = Lifecycle()
        self.thread = try System.spawnThread {
            System.setCurrentThreadName(name)
            let loop: PortRunLoop
            do throws(PortRunLoopError) {
                loop = try PortRunLoop.makeForNewThread(name: name, logger: logger)
            } catch {
                lifecycle.move(to: .failed(error))
                return
            }
            let keepAlive = MessagePort()
            loop.add(keepAlive, forMode: .common)
            loop.logger.debug("RunLoopThread started", metadata: [LogKey.loop: "\(name)"])
            lifecycle.move(to: .running(loop))
            while !lifecycle.phase.withLock({ $0.isLeaving }) {
                loop.run(mode: .default, timeout: .infinity, returnAfterSourceHandled: false)
            }
            // stop() ends every run at once; when it arrived inside a nested run (a modal run, a
            // synchronous wait) the outer run ended before reaching work queued ahead of the stop.
            // One last polling turn handles it, keeping the rule "queued before stop() is handled".
            loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: false)
            loop.shutDownIfNeeded()
            loop.logger.debug("RunLoopThread stopped", metadata: [LogKey.loop: "\(name)"])
            // What a `stop()` made on this thread itself leaves to the thread, and what concurrent
            // callers wait for: the loop is shut down, and the thread leaves.
            lifecycle.leave()
        }
        lifecycle.started.waitUntilComplete(deadline: .infinity)
        switch lifecycle.phase.withLock({ $0 }) {
        case .running(let loop):
            self.loop = loop
        case .failed(let error):
            System.join(thread)
            throw error
        default:
            InternalFailure.fail("RunLoopThread: the thread left its start-up without a loop")
        }
        self.name = name
        self.lifecycle = lifecycle
    }

    /// Handles what was queued before the call, ends the loop, shuts it down and joins the thread.
    /// Idempotent; concurrent callers all return once the thread has shut its loop down and left.
    /// Called on the thread itself (from a handler), it ends the loop but cannot join: the thread
    /// shuts the loop down and exits after the handler, and other callers wait for that.
    ///
    /// Called on another loop's thread, it serves that loop's synchronous work while it waits, as
    /// ``PortRunLoop/performAndWait(timeout:_:)`` does: work queued on this thread before the stop
    /// that calls back into the caller's loop (a `performAndWait`, a `postAndWait`) completes
    /// instead of deadlocking the two threads.
    ///
    /// Thread-safety: any thread.
    public func stop() {
        let lifecycle = self.lifecycle
        let first = lifecycle.phase.withLock { phase -> Bool in
            guard case .running = phase else { return false }
            phase = .stopping
            return true
        }
        guard first else {
            // Someone else is stopping: wait until the thread is gone (unless we are that thread).
            if !loop.isCurrentThread { lifecycle.waitForTheEnd(of: loop) }
            return
        }
        loop.enqueue(QueuedWork(modes: .all, kind: .block { [loop] in
            lifecycle.move(to: .leaving)
            loop.stopAllRuns()
        }))
        if loop.isCurrentThread {
            // Cannot join ourselves: the run loop ends after the current handler, and the thread
            // marks itself stopped once it has shut its loop down.
            lifecycle.move(to: .leaving)
            loop.stopAllRuns()
            System.detach(thread)
            return
        }
        lifecycle.waitForTheEnd(of: loop)
        System.join(thread) // the thread has left its body: at most a few instructions from exiting
    }

    /// True once the thread has shut its loop down and left (``stop()`` returns then; called on
    /// the thread itself, it returns before).
    ///
    /// Thread-safety: any thread.
    public var isStopped: Bool { lifecycle.phase.withLock { $0.isStopped } }

    deinit {
        guard lifecycle.phase.withLock({ if case .running = $0 { true } else { false } }) else { return }
        loop.logger.debug("RunLoopThread released while running: stopping it", metadata: [LogKey.loop: "\(name)"])
        stop()
    }
}
