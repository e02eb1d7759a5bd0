extension PortRunLoop {
    /// This loop as a `TaskExecutor`, for `withTaskExecutorPreference` and
    /// `Task(executorPreference:)`. The same object is returned for as long as anything holds it.
    ///
    /// Thread-safety: any thread.
    public var taskExecutor: RunLoopTaskExecutor {
        inbox.withLock { inbox in
            if let existing = inbox.taskExecutor { return existing }
            let created = RunLoopTaskExecutor(loop: self)
            inbox.taskExecutor = created
            return created
        }
    }
}
