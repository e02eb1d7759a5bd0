internal import CLibEvent
import Logging

/// The one place PortRunLoopKit talks to libevent. Nothing outside `LibEvent/` imports `CLibEvent`.
///
/// libevent facts this layer encodes (2.1.12):
/// - `evthread_use_pthreads()` must run once before the first `event_base_new()`.
///   ``LibEvent/ensureThreadingEnabled()`` does it exactly once (with the log and fatal callbacks).
///   Loops' own bases are lock-free (`EVENT_BASE_FLAG_NOLOCK`, see ``EventBase``); the call keeps
///   libevent usable by other libraries that share a process with us and expect it.
/// - `event_base_loop` refuses re-entry from its own callbacks (returns -1). Our callbacks therefore
///   only *mark* sources ready; Swift dispatches handlers after the libevent call has returned, which
///   is what makes nested runs possible.
/// - libevent writes its warnings to stderr unless `event_set_log_callback` routes them elsewhere:
///   they go to swift-log (label `PortRunLoop.libevent`), never to stderr.
enum LibEvent {
    private static let threadingEnabled: Bool = {
        event_set_log_callback(portRunLoopLibEventLog)
        event_set_fatal_callback(portRunLoopLibEventFatal)
        return evthread_use_pthreads() == 0
    }()

    /// Calls `evthread_use_pthreads()` once per process and routes libevent's log into swift-log.
    static func ensureThreadingEnabled() throws(PortRunLoopError) {
        guard threadingEnabled else { throw .libeventThreadingUnavailable }
    }

    /// Where libevent's own messages go.
    static let logger = Logger(label: "PortRunLoop.libevent")
}

private let portRunLoopLibEventLog: event_log_cb = { severity, message in
    let text = message.map { String(cString: $0) } ?? "(no message)"
    let level: Logger.Level = switch severity {
    case EVENT_LOG_DEBUG: .debug
    case EVENT_LOG_MSG: .info
    case EVENT_LOG_WARN: .warning
    default: .error
    }
    LibEvent.logger.log(level: level, "\(text)")
}

private let portRunLoopLibEventFatal: event_fatal_cb = { code in
    LibEvent.logger.critical("libevent reported a fatal internal error", metadata: ["code": "\(code)"])
    fatalError("PortRunLoop: libevent reported a fatal internal error (code \(code))")
}

/// Readiness flags of a libevent event (`EV_TIMEOUT`, `EV_READ`, `EV_WRITE`, `EV_PERSIST`, `EV_ET`), typed.
struct EventFlags: OptionSet {
    let rawValue: Int16
    static let read = EventFlags(rawValue: Int16(EV_READ))
    static let write = EventFlags(rawValue: Int16(EV_WRITE))
    static let persist = EventFlags(rawValue: Int16(EV_PERSIST))
    static let edgeTriggered = EventFlags(rawValue: Int16(EV_ET))
}

/// Receives libevent callbacks. Subclasses override ``eventFired(_:)``, which runs on the loop's
/// thread *inside* `event_base_loop`: it must only record readiness, never call user code.
class LibEventReceiver {
    func eventFired(_ flags: EventFlags) {}
}
