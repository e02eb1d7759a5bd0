import ServiceContextModule

/// Carries a caller's `ServiceContext` (swift-service-context's task-local, what
/// swift-distributed-tracing keeps its spans in) across the library's thread hops.
///
/// Every entry point that queues work for another thread (`perform`, `performAndWait`, `submit`,
/// `MessagePort.send`, the notification center's posts, a notification queue's `enqueue`, the
/// redirector) reads ``capture()`` on the caller's thread and stores the answer next to the work;
/// the loop's thread calls the handler inside ``PortRunLoop/withCallerContext(_:ambient:_:)``, which
/// binds it with `ServiceContext.withValue`. Executor jobs need none of this: a job belongs to a
/// task, and a task carries its task-locals itself.
///
/// Cost: reading the task-local is one call into the Swift runtime (it looks at the current task,
/// then at the thread's task-local fallback storage); with no context set nothing is allocated and
/// no lock is taken. Binding one allocates (the runtime's task-local item), only when a context
/// was set.
///
/// Thread-safety: stateless.
enum CallerContext {
    /// The calling thread's or task's current context, nil when none is set.
    @inline(__always) static func capture() -> ServiceContext? {
        ServiceContext.current
    }

    /// Whether the calling thread or task has a context bound right now.
    @inline(__always) static var isSet: Bool {
        ServiceContext.current != nil
    }
}

extension PortRunLoop {
    /// Runs `body` with `context` as `ServiceContext.current`: the context of the caller that queued
    /// the work, or none. `ambient` is whether a context is bound on this thread around the call
    /// (``RunFrame/hasAmbientContext`` of the run the loop is in): when it is, work queued without
    /// a context runs with the context cleared, so that nothing leaks from an outer handler into
    /// unrelated work of a nested run. With neither, `body` is called directly.
    ///
    /// Thread-safety: the loop's thread.
    @inline(__always)
    func withCallerContext<T>(_ context: ServiceContext?, ambient: Bool, _ body: () throws -> T) rethrows -> T {
        if let context { return try ServiceContext.withValue(context, operation: body) }
        if ambient { return try ServiceContext.withValue(nil, operation: body) }
        return try body()
    }

    /// Whether the innermost run was entered with a context bound (see
    /// ``withCallerContext(_:ambient:_:)``); outside any run, asks the runtime.
    ///
    /// Thread-safety: the loop's thread.
    var innermostRunHasAmbientContext: Bool {
        frames.last?.hasAmbientContext ?? CallerContext.isSet
    }
}
