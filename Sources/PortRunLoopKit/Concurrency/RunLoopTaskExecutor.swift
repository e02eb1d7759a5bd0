/// A ``PortRunLoop`` as a Swift concurrency `TaskExecutor`: tasks that prefer it run their
/// nonisolated code on the loop's thread (in its common modes, through the loop's one work queue,
/// FIFO with ``PortRunLoop/perform(inModes:_:)``). Get it from ``PortRunLoop/taskExecutor``.
///
/// ```swift
/// let bytes = await withTaskExecutorPreference(worker.loop.taskExecutor) {
///     await parser.parseNext()        // nonisolated async code: runs on the worker thread
/// }
/// Task(executorPreference: worker.loop.taskExecutor) { … }
/// ```
///
/// Actor-isolated code still runs on its actor's executor; for an actor that lives on the loop's
/// thread, pin the actor itself (``PortRunLoop/unownedExecutor``). Jobs of a shut-down loop fail
/// over to its after-shutdown queue, as its actors' jobs do.
///
/// Thread-safety: `Sendable`; jobs may be enqueued from any thread; they run on the loop's thread.
public final class RunLoopTaskExecutor: TaskExecutor, Sendable {
    /// The loop whose thread runs the jobs (kept alive by this executor).
    ///
    /// Thread-safety: immutable.
    public let loop: PortRunLoop

    init(loop: PortRunLoop) {
        self.loop = loop
    }

    /// Queues a task's `job` to run on the loop's thread in the common modes.
    ///
    /// Thread-safety: any thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        loop.enqueueJob(LoopJob(job: UnownedJob(job), taskExecutor: asUnownedTaskExecutor()))
    }

    /// This executor as an `UnownedTaskExecutor`.
    ///
    /// Thread-safety: any thread.
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}
