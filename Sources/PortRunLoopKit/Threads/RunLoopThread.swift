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
    private let phase = TracedMutex(Phase.running)

    private enum Phase { case running, stopping, stopped }

    private final class Startup: Sendable {
        let result = TracedMutex<Result<PortRunLoop, PortRunLoopError>?>(nil)
        let stopRequested = Atomic<Bool>(false)
    }

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
        let startup = Startup()
        self.thread = try System.spawnThread {
            System.setCurrentThreadName(name)
            let loop: PortRunLoop
            do throws(PortRunLoopError) {
                loop = try PortRunLoop.makeForNewThread(name: name, logger: logger)
            } catch {
                startup.result.withLock { $0 = .failure(error) }
                startup.result.broadcast()
                return
            }
            let keepAlive = MessagePort()
            loop.add(keepAlive, forMode: .common)
            loop.logger.debug("RunLoopThread started", metadata: [LogKey.loop: "\(name)"])
            startup.result.withLock { $0 = .success(loop) }
            startup.result.broadcast()
            while !startup.stopRequested.load(ordering: .acquiring) {
                loop.run(mode: .default, timeout: .infinity, returnAfterSourceHandled: false)
            }
            // stop() ends every run at once; when it arrived inside a nested run (a modal run, a
            // synchronous wait) the outer run ended before reaching work queued ahead of the stop.
            // One last polling turn handles it, keeping the rule "queued before stop() is handled".
            loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: false)
            loop.shutDownIfNeeded()
            loop.logger.debug("RunLoopThread stopped", metadata: [LogKey.loop: "\(name)"])
        }
        _ = startup.result.wait { $0 != nil }
        let result = startup.result.withLock { $0! }
        switch result {
        case .success(let loop):
            self.loop = loop
        case .failure(let error):
            System.join(thread)
            throw error
        }
        self.name = name
        self.startupBox = startup
    }

    private let startupBox: Startup

    /// Handles what was queued before the call, ends the loop, shuts it down and joins the thread.
    /// Idempotent; concurrent callers all return once the thread has exited. Called on the thread
    /// itself (from a handler), it ends the loop but cannot join: the thread exits after the handler.
    ///
    /// Thread-safety: any thread.
    public func stop() {
        let first = phase.withLock { phase -> Bool in
            guard phase == .running else { return false }
            phase = .stopping
            return true
        }
        guard first else {
            // Someone else is stopping: wait until the thread is gone (unless we are that thread).
            if !loop.isCurrentThread {
                _ = phase.wait { $0 == .stopped }
            }
            return
        }
        let startup = startupBox
        loop.enqueue(QueuedWork(modes: .all, kind: .block { [loop] in
            startup.stopRequested.store(true, ordering: .releasing)
            loop.stopAllRuns()
        }))
        if loop.isCurrentThread {
            // Cannot join ourselves: the run loop ends after the current handler and the thread exits.
            startup.stopRequested.store(true, ordering: .releasing)
            loop.stopAllRuns()
            System.detach(thread)
        } else {
            System.join(thread)
        }
        phase.withLock { $0 = .stopped }
        phase.broadcast()
    }

    /// True once ``stop()`` has finished (the thread has exited, or is exiting when `stop()` was
    /// called from the thread itself).
    ///
    /// Thread-safety: any thread.
    public var isStopped: Bool { phase.withLock { $0 == .stopped } }

    deinit {
        if phase.withLock({ $0 == .running }) { stop() }
    }
}

extension PortRunLoop {
    /// Owner thread: stops every run in progress, not just the innermost.
    func stopAllRuns() {
        for index in frames.indices { frames[index].stopped = true }
    }

    /// Shuts the loop down once; later calls do nothing.
    func shutDownIfNeeded() {
        if !isShutDown { shutDown() }
    }
}
