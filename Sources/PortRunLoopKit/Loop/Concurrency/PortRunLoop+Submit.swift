extension PortRunLoop {
    /// Runs `body` on the loop's thread and returns its value or rethrows its error, without
    /// blocking the caller: the `async` counterpart of ``performAndWait(timeout:_:)``.
    ///
    /// ```swift
    /// let count = try await worker.loop.submit { cache.count }   // cache is owned by the loop's thread
    /// ```
    ///
    /// - The body runs in the loop's common modes (and, like a `performAndWait` body, while the
    ///   loop's thread itself waits in `performAndWait`), in FIFO order with ``perform(inModes:_:)``
    ///   blocks and executor jobs. Called on the loop's own thread, it runs inline, at once.
    /// - Cancelling the calling task before the body started withdraws it: it never runs, its
    ///   closure is released, and `CancellationError` is thrown at once (an already cancelled task
    ///   throws without queueing anything). A body that started runs to completion and its result
    ///   is returned even if the task was cancelled meanwhile.
    /// - A shut-down loop (its thread exited, or its ``RunLoopThread`` stopped) throws
    ///   ``PortRunLoopError/loopShutDown``, also when it shuts down before the body started.
    ///
    /// Named `submit` rather than `perform` because an `async` overload of
    /// ``perform(inModes:_:)`` would capture existing `loop.perform { … }` calls in async code.
    ///
    /// Thread-safety: any thread or task.
    public func submit<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        if isLiveOwnerThread {
            try Task.checkCancellation()
            return try body()
        }
        let call = AsyncCall(body)
        let context = CallerContext.capture()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard call.attach(continuation) else { return }
                if !enqueue(QueuedWork(modes: .common, kind: .call(call), context: context)) {
                    call.fail(.loopShutDown)
                }
            }
        } onCancel: {
            call.cancel()
        }
    }
}
