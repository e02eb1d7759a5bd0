internal import CLibEvent

/// The one place PortRunLoopKit talks to libevent. Nothing outside `LibEvent/` imports `CLibEvent`.
///
/// libevent facts this layer encodes (2.1.12):
/// - `evthread_use_pthreads()` must run once before the first `event_base_new()`, or cross-thread
///   `event_active` races the owner. ``LibEvent/ensureThreadingEnabled()`` does it exactly once.
/// - `event_base_loop` refuses re-entry from its own callbacks (returns -1). Our callbacks therefore
///   only *mark* sources ready; Swift dispatches handlers after the libevent call has returned, which
///   is what makes nested runs possible.
/// - `event_active` merges repeated activations: the doorbell is a doorbell, never a message count.
enum LibEvent {
    private static let threadingEnabled: Bool = evthread_use_pthreads() == 0

    /// Calls `evthread_use_pthreads()` once per process.
    static func ensureThreadingEnabled() throws(PortRunLoopError) {
        guard threadingEnabled else { throw .libeventThreadingUnavailable }
    }

    /// The linked libevent's version string (`event_get_version()`).
    static var version: String { String(cString: event_get_version()) }
}

/// Readiness flags of a libevent event (`EV_TIMEOUT`, `EV_READ`, `EV_WRITE`), typed.
struct EventFlags: OptionSet {
    let rawValue: Int16
    static let timeout = EventFlags(rawValue: Int16(EV_TIMEOUT))
    static let read = EventFlags(rawValue: Int16(EV_READ))
    static let write = EventFlags(rawValue: Int16(EV_WRITE))
    static let persist = EventFlags(rawValue: Int16(EV_PERSIST))
}

/// Receives libevent callbacks. Subclasses override ``eventFired(_:)``, which runs on the loop's
/// thread *inside* `event_base_loop`: it must only record readiness, never call user code.
class LibEventReceiver {
    func eventFired(_ flags: EventFlags) {}
}

