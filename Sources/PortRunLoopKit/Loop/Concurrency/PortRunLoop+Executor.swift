import Dispatch

/// A ``PortRunLoop`` is a Swift concurrency `SerialExecutor`: an actor pins itself to the loop's
/// thread by returning the loop's executor, and every job of that actor then runs on the loop's
/// thread, inside a run of one of the loop's common modes, through the same one-signal-per-batch
/// queue as ``perform(inModes:_:)`` (jobs and perform blocks share one FIFO).
///
/// ```swift
/// actor Connection {
///     let loop: PortRunLoop
///     nonisolated var unownedExecutor: UnownedSerialExecutor { loop.unownedExecutor }
/// }
/// ```
///
/// For tasks (nonisolated code) use ``taskExecutor``: `Task(executorPreference: loop.taskExecutor)`.
///
/// Rules:
/// - Jobs never nest: a job that starts a nested run of its own loop does not see other jobs run
///   inside that run (they run once the job returns). Perform blocks, port messages, timers and fd
///   handlers still run in nested runs. This keeps an actor's synchronous code from being
///   re-entered — libdispatch's rule for the main queue inside a nested CFRunLoop.
/// - Code on the loop's thread is isolated to this executor even outside a job (in a perform
///   block, a port handler, …): `assumeIsolated` on a pinned actor succeeds there, and traps with
///   a message elsewhere. In a run nested inside a running job, where the job's actor is
///   suspended below on the stack, ``PortRunLoop/isIsolatingCurrentContext()`` answers false and
///   ``PortRunLoop/checkIsolated()`` traps; the runtime's `assumeIsolated` and `preconditionIsolated` do not
///   ask there, though: while a job of this executor runs on the thread they find it active and
///   pass. Code in such a nested run must not touch a pinned actor's state.
/// - Once the loop is shut down (its thread exited or its ``RunLoopThread`` stopped) its jobs are
///   not lost: jobs still queued, and any enqueued later, *fail over* in order to a serial dispatch
///   queue private to the loop, where they run one at a time, still isolated to this executor
///   (`assumeIsolated` keeps working; it is not the loop's thread). Tasks that still target
///   a dead loop therefore finish instead of hanging forever.
/// - Keep the loop alive as long as anything may use it as an executor (an actor stores it):
///   `UnownedSerialExecutor` does not retain it.
///
/// Thread-safety: `Sendable`; jobs may be enqueued from any thread; they run on the loop's thread.
extension PortRunLoop: SerialExecutor {
    /// Queues an actor's `job` to run on the loop's thread in the common modes, waking a sleeping
    /// loop (one wake signal per batch, as for ``perform(inModes:_:)``). On a shut-down loop the
    /// job fails over to the loop's after-shutdown serial queue.
    ///
    /// Thread-safety: any thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        enqueueJob(LoopJob(job: UnownedJob(job), taskExecutor: nil))
    }

    /// This loop as an `UnownedSerialExecutor`, for an actor's `unownedExecutor`.
    ///
    /// Thread-safety: any thread.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// The value an actor pinned to this loop returns from its `unownedExecutor`:
    /// `nonisolated var unownedExecutor: UnownedSerialExecutor { loop.unownedExecutor }`.
    ///
    /// Thread-safety: any thread.
    public var unownedExecutor: UnownedSerialExecutor { asUnownedSerialExecutor() }

    /// Two loops are the same execution context only when they are the same loop (one thread each).
    ///
    /// Thread-safety: any thread.
    public func isSameExclusiveExecutionContext(other: PortRunLoop) -> Bool {
        self === other
    }

    /// True when the caller is isolated to this executor: it runs on the loop's thread (in a job,
    /// a perform block, a handler, or any other code there), or in one of this loop's jobs that
    /// failed over after shutdown. Never nil: the answer is always known.
    ///
    /// Thread-safety: any thread.
    public func isIsolatingCurrentContext() -> Bool? {
        isolatesCurrentContext
    }

    /// Traps, naming the loop, unless the caller is isolated to this executor (see
    /// ``isIsolatingCurrentContext()``). The runtime may call it for `assumeIsolated` and
    /// `preconditionIsolated` when the current task is not already known to run here.
    ///
    /// Thread-safety: any thread.
    public func checkIsolated() {
        Misuse.check(isolatesCurrentContext,
                     "code isolated to the executor of loop '\(name)' ran on another thread (assumeIsolated / preconditionIsolated off the loop's thread)")
    }

    /// True on the loop's own thread while the loop is alive. ``isCurrentThread`` compares
    /// `pthread_t`s, which glibc hands out again once a thread has exited: a dead loop's id can
    /// come back as an unrelated thread (seen: an after-shutdown queue worker). A loop is shut down
    /// before its thread exits, so "not shut down" rules that out. Costs one lock, on-thread only.
    var isLiveOwnerThread: Bool {
        isCurrentThread && !isShutDown
    }

    /// Queues a job of either role through the loop's work queue, or fails it over after shutdown.
    func enqueueJob(_ job: LoopJob) {
        if !enqueue(QueuedWork(modes: .common, kind: .job(job))) {
            let queue = inbox.withLock { inbox in afterShutdownQueue(&inbox) }
            queue.async { RunningExecutorJob.run(job, on: self) }
        }
    }

    /// Owner thread: runs one executor job (called from the queue in `runQueuedWork`), noting how
    /// deep in runs it started (``isolatesCurrentContext``).
    func runExecutorJob(_ job: LoopJob) {
        let outer = jobStartedAtRunDepth
        jobStartedAtRunDepth = frames.count
        RunningExecutorJob.run(job, on: self)
        jobStartedAtRunDepth = outer
    }

    /// Whether the caller is isolated to this executor: on the loop's live thread, unless it is
    /// inside a run nested in a running executor job (a perform block or handler there must not
    /// count as isolated, or `assumeIsolated` would let it into the actor whose job is suspended
    /// below it on the stack); or in one of this loop's jobs that failed over after shutdown.
    var isolatesCurrentContext: Bool {
        if isLiveOwnerThread {
            guard let depth = jobStartedAtRunDepth else { return true }
            return frames.count <= depth
        }
        return RunningExecutorJob.isRunning(for: self)
    }

    /// Inbox lock held, loop shut down: the serial queue that runs this loop's jobs from now on,
    /// created on first use.
    func afterShutdownQueue(_ inbox: inout Inbox) -> DispatchQueue {
        if let queue = inbox.afterShutdownJobs { return queue }
        let queue = DispatchQueue(label: "PortRunLoop.\(name).after-shutdown")
        inbox.afterShutdownJobs = queue
        return queue
    }

    /// Shutdown path, inbox lock held (so these go first, before any job enqueued after the shutdown):
    /// hands the executor jobs still queued in `items` over to the after-shutdown queue, in order.
    func handOverQueuedJobs(_ items: some Sequence<QueuedWork>, inbox: inout Inbox) {
        var queue: DispatchQueue?
        for item in items {
            guard case .job(let job) = item.kind else { continue }
            if queue == nil { queue = afterShutdownQueue(&inbox) }
            queue!.async { RunningExecutorJob.run(job, on: self) }
        }
    }
}
