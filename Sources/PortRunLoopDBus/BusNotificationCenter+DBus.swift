import Logging
import PortRunLoopKit

extension BusNotificationCenter {
    /// Connects to `endpoint` (blocking the calling thread for the connection and the bus's
    /// `Hello`, which libdbus bounds by its default reply timeout, 25 s; `callTimeout` does not
    /// apply to it) and services the connection on `loop`.
    ///
    /// - Parameters:
    ///   - endpoint: ``BusEndpoint/session`` (default), ``BusEndpoint/system``, or an address.
    ///   - loop: the loop that runs the connection (default: `PortRunLoop.main`).
    ///   - logger: the center's `logger`; the default logs nothing.
    ///   - heldNotificationLimit: the center's `heldNotificationLimit`; at least 1.
    ///   - callTimeout: the center's `callTimeout`; positive.
    /// - Throws: `BusNotificationError.connectionFailed(_:)` when the bus cannot be reached.
    ///
    /// Thread-safety: any thread.
    public convenience init(endpoint: BusEndpoint = .session, loop: PortRunLoop = .main, logger: Logger = BusNotificationCenter.disabledLogger,
                            heldNotificationLimit: Int = BusNotificationCenter.defaultHeldNotificationLimit,
                            callTimeout: Duration = .seconds(5)) throws(BusNotificationError) {
        Self.check(heldNotificationLimit: heldNotificationLimit, callTimeout: callTimeout)
        let transport = try DBusTransport(endpoint: endpoint, loop: loop, logger: logger, timeout: callTimeout)
        self.init(transport: transport, endpoint: endpoint, logger: logger,
                  heldNotificationLimit: heldNotificationLimit, callTimeout: callTimeout)
    }

    /// Observes every D-Bus signal `rule` matches (any program's, not only notifications), calling
    /// `handler` with its typed arguments on `loop`'s thread; e.g. the bus's `NameOwnerChanged`:
    /// `BusMatchRule(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged")`.
    /// Suspension does not apply to signals. Returns once the rule is in effect at the bus.
    ///
    /// - Throws: `BusNotificationError.invalidMatchRule(_:)` for a field that is not valid D-Bus,
    ///   or when the center's transport is not D-Bus (a Redis center carries notifications only),
    ///   `BusNotificationError.disconnected`, `BusNotificationError.timedOut`, or the bus's refusal.
    ///
    /// Thread-safety: any thread.
    public func addSignalObserver(matching rule: BusMatchRule, on loop: PortRunLoop = .main,
                                  using handler: @escaping @Sendable (BusSignal) -> Void) throws(BusNotificationError) -> BusObservation {
        guard let dbus = transport as? DBusTransport else {
            throw .invalidMatchRule("D-Bus match rules observe D-Bus signals; this center's transport carries notifications only")
        }
        let token = try dbus.subscribe(matching: rule)
        return observeSignals(BusSignal.self, subscription: token, on: loop, label: "\(rule) on \(loop.name)",
                              accepting: { rule.matches($0) }, using: handler)
    }
}
