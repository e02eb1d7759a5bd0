import ServiceContextModule
import Synchronization

extension PortRunLoop {
    /// When the library carries the caller's `ServiceContext` across its thread hops (see
    /// <doc:Semantics>, C1–C6). Reading the context costs a call into the Swift runtime per queued
    /// item — tens of nanoseconds, more than a whole `MessagePort` send costs without it — so it is
    /// done only where contexts are in use:
    /// - ``ServiceContextCapture/automatic`` (the default): on once a tracer or other instrument is
    ///   bootstrapped (`InstrumentationSystem.bootstrap`, checked when this is set and whenever a
    ///   loop is made), off before;
    /// - ``ServiceContextCapture/always``: for contexts used without an instrument (a swift-log
    ///   metadata provider reading a request id, say);
    /// - ``ServiceContextCapture/never``: hops cost what they cost without contexts.
    ///
    /// Set it at start-up; work already queued keeps what it captured.
    ///
    /// Thread-safety: any thread (an atomic; the hot path reads one flag with a relaxed load).
    public static var serviceContextCapture: ServiceContextCapture {
        get { ServiceContextCapture(rawValue: CallerContext.mode.load(ordering: .relaxed)) ?? .automatic }
        set {
            CallerContext.mode.store(newValue.rawValue, ordering: .relaxed)
            CallerContext.resolve()
        }
    }

    /// Runs `body` with `context` as `ServiceContext.current`: the context of the caller that queued
    /// the work, or none. `ambient` is whether a context is bound on this thread around the call
    /// (``RunFrame/hasAmbientContext`` of the run the loop is in): when it is, work queued without
    /// a context runs with the context cleared, so that nothing leaks from an outer handler into
    /// unrelated work of a nested run. With neither, `body` is called directly.
    ///
    /// Only that test is inlined into the callers (the loop's hot paths); binding a context, a
    /// task-local binding of some size, is out of line (``withCallerContextBound(_:_:)``), so that
    /// the code a wake-up runs stays on few pages.
    ///
    /// Thread-safety: the loop's thread.
    @inline(__always)
    func withCallerContext<T>(_ context: CapturedContext?, ambient: Bool, _ body: () throws -> T) rethrows -> T {
        if let context { return try withCallerContextBound(context.value, body) }
        if ambient { return try withCallerContextBound(nil, body) }
        return try body()
    }

    /// ``withCallerContext(_:ambient:_:)`` with a context to bind: `value`, or none (the ambient
    /// one cleared).
    @inline(never)
    private func withCallerContextBound<T>(_ value: ServiceContext?, _ body: () throws -> T) rethrows -> T {
        try ServiceContext.withValue(value, operation: body)
    }

    /// Whether the innermost run was entered with a context bound (see
    /// ``withCallerContext(_:ambient:_:)``); outside any run, asks the runtime.
    ///
    /// Thread-safety: the loop's thread.
    var innermostRunHasAmbientContext: Bool {
        @inline(__always) get {
            frames.last?.hasAmbientContext ?? CallerContext.isSet
        }
    }
}
