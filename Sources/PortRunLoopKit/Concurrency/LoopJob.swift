/// An executor job queued on a loop, with the role it was enqueued in.
///
/// One object cannot serve as both executors: the runtime hands a job to `enqueue` without saying
/// whether it targets the serial executor (an actor pinned to the loop) or the task executor (a
/// task preferring the loop), and a job run as *isolated to* the loop makes every nonisolated
/// `async` call inside it hop back through the queue. So the loop itself is the `SerialExecutor`
/// and ``PortRunLoop/taskExecutor`` is a separate `TaskExecutor` object; each tags its jobs here.
///
/// Thread-safety: a value type; `Sendable`.
struct LoopJob: Sendable {
    let job: UnownedJob
    /// nil for an actor's job (run isolated to the loop's serial executor); the task executor the
    /// job was enqueued on otherwise (run on it, not isolated to any actor).
    let taskExecutor: UnownedTaskExecutor?

    /// Runs the job in its role, on the calling thread.
    func run(on loop: PortRunLoop) {
        if let taskExecutor {
            job.runSynchronously(on: taskExecutor)
        } else {
            job.runSynchronously(on: loop.asUnownedSerialExecutor())
        }
    }
}
