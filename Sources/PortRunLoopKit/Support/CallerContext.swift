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
/// then at the thread's task-local fallback storage), which costs more than a whole `MessagePort`
/// send without it (Docs/Benchmarks.md, `Throughput1P.Ours.MessagePort.send.contextCapture` beside
/// `Throughput1P.Ours.MessagePort.send`). With no context set nothing is allocated and no lock is
/// taken. Binding one allocates (the runtime's task-local item), only when a context was set.
/// Capturing is therefore on only where contexts are in use
/// (``PortRunLoop/serviceContextCapture``); off, the check is one relaxed load.
///
/// Thread-safety: stateless.
enum CallerContext {
    /// Whether entry points read the caller's context now (``PortRunLoop/serviceContextCapture``,
    /// resolved): one relaxed load per queued item.
    static let isCapturing = Atomic<Bool>(false)
    /// ``PortRunLoop/serviceContextCapture``'s raw value.
    static let mode = Atomic<UInt8>(ServiceContextCapture.automatic.rawValue)

    /// Works ``isCapturing`` out from the mode (and, when automatic, from whether an instrument is
    /// bootstrapped). Called when the mode is set and when a loop is made: never per item.
    static func resolve() {
        let capturing: Bool
        switch ServiceContextCapture(rawValue: mode.load(ordering: .relaxed)) ?? .automatic {
        case .always: capturing = true
        case .never: capturing = false
        case .automatic: capturing = !(InstrumentationSystem.instrument is NoOpInstrument)
        }
        isCapturing.store(capturing, ordering: .relaxed)
    }

    /// The calling thread's or task's current context: nil when none is set, or when capturing is
    /// turned off for the process.
    @inline(__always) static func capture() -> CapturedContext? {
        guard isCapturing.load(ordering: .relaxed), let context = ServiceContext.current else { return nil }
        return CapturedContext(context)
    }

    /// Whether the calling thread or task has a context bound right now, as far as the library
    /// cares: with capturing off it neither carries contexts nor clears them, so it does not ask
    /// (a run entry would otherwise pay the runtime call that capturing off is meant to save).
    @inline(__always) static var isSet: Bool {
        isCapturing.load(ordering: .relaxed) && ServiceContext.current != nil
    }
}

/// A caller's `ServiceContext`, boxed, as queued work and messages carry it.
///
/// Why a box: `ServiceContext` comes from another module, so the compiler copies and destroys an
/// optional one through its type metadata, a few hundred instructions each time, where a
/// reference costs a retain or a null check. Every `perform` and every send copies the work item
/// it queues at least once and destroys it after it ran, and nearly always without a context:
/// the box keeps that path short (a `nil` reference), at the price of one allocation when a
/// context is carried.
///
/// Thread-safety: immutable; `Sendable`.
final class CapturedContext: Sendable {
    let value: ServiceContext

    init(_ value: ServiceContext) { self.value = value }
}

/// When ``PortRunLoop`` carries the caller's `ServiceContext` across its thread hops
/// (``PortRunLoop/serviceContextCapture``).
///
/// Thread-safety: a value type; `Sendable`.
public enum ServiceContextCapture: UInt8, Sendable {
    /// On once an instrument (a tracer) is bootstrapped with `InstrumentationSystem.bootstrap`,
    /// off before. The default.
    ///
    /// Thread-safety: a value.
    case automatic
    /// Always: for contexts used without a bootstrapped instrument.
    ///
    /// Thread-safety: a value.
    case always
    /// Never: no hop reads the caller's context.
    ///
    /// Thread-safety: a value.
    case never
}
