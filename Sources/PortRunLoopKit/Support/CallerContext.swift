import ServiceContextModule
import Synchronization

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
/// then at the thread's task-local fallback storage): about 15–30 ns on a 2-vCPU VM, which is more
/// than a whole `MessagePort` send costs without it (Docs/Benchmarks.md). With no context set
/// nothing is allocated and no lock is taken. Binding one allocates (the runtime's task-local
/// item), only when a context was set. A process that never uses contexts can turn capturing off
/// (``PortRunLoop/capturesServiceContext``); the check is then one relaxed load.
///
/// Thread-safety: stateless.
enum CallerContext {
    /// ``PortRunLoop/capturesServiceContext``: one relaxed load per queued item.
    static let isCapturing = Atomic<Bool>(true)

    /// The calling thread's or task's current context: nil when none is set, or when capturing is
    /// turned off for the process.
    @inline(__always) static func capture() -> ServiceContext? {
        guard isCapturing.load(ordering: .relaxed) else { return nil }
        return ServiceContext.current
    }

    /// Whether the calling thread or task has a context bound right now.
    @inline(__always) static var isSet: Bool {
        ServiceContext.current != nil
    }
}

extension PortRunLoop {
    /// Whether the library carries the caller's `ServiceContext` across its thread hops (see
    /// <doc:Semantics>, C1–C6). On by default: a span started by a request handler stays the parent
    /// of the work it hands to a loop. Reading the context costs a call into the Swift runtime per
    /// queued item (tens of nanoseconds, most of a `MessagePort` send's cost); a process that never
    /// sets a context can turn it off, at start-up, and each hop then costs what it did without
    /// it. Work already queued keeps what it captured.
    ///
    /// Thread-safety: any thread (an atomic flag, read with a relaxed load per queued item).
    public static var capturesServiceContext: Bool {
        get { CallerContext.isCapturing.load(ordering: .relaxed) }
        set { CallerContext.isCapturing.store(newValue, ordering: .relaxed) }
    }

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
