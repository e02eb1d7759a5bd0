/// Which loop's executor job, if any, the calling thread is running right now (a thread-local,
/// ``ThreadLocals/runningJob``).
///
/// It answers two questions: "may an executor job start here?" (no, while another job is on this
/// thread's stack: jobs never nest) and "is this after-shutdown queue thread isolated to loop X?"
/// (yes, while it runs one of X's jobs).
///
/// Thread-safety: each thread sees only its own value.
enum RunningExecutorJob {
    /// Runs `job` for `loop`, marking the thread meanwhile.
    static func run(_ job: LoopJob, on loop: PortRunLoop) {
        let previous = ThreadLocals.runningJob
        ThreadLocals.runningJob = Unmanaged.passUnretained(loop).toOpaque()
        job.run(on: loop)
        ThreadLocals.runningJob = previous
    }

    /// True while the calling thread runs a job of any loop.
    static var isRunningAny: Bool { ThreadLocals.runningJob != nil }

    /// True while the calling thread runs a job of `loop`.
    static func isRunning(for loop: PortRunLoop) -> Bool {
        ThreadLocals.runningJob == Unmanaged.passUnretained(loop).toOpaque()
    }
}
