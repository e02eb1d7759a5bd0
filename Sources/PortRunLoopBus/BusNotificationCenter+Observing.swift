import Foundation
import PortRunLoopKit

extension BusNotificationCenter {
    /// Observes notifications named `name` (nil: every name) with object `object` (nil: any) from
    /// every process on the bus, calling `handler` on `loop`'s thread.
    ///
    /// Returns once the bus delivers matching notifications to this center (a notification posted
    /// after the call returns, by anyone, reaches the handler). Blocks the calling thread for one
    /// round trip to the bus (from another thread than ``loop``'s, also for ``loop`` to take it:
    /// at most ``callTimeout``).
    ///
    /// - Parameters:
    ///   - name: the notification name to observe; nil observes every name.
    ///   - object: the object string to observe; nil observes any object.
    ///   - suspensionBehavior: what happens while the center is ``suspended`` (Apple's default,
    ///     `.coalesce`).
    ///   - loop: the thread to deliver on (default: `PortRunLoop.main`). Deliveries to one
    ///     observation keep arrival order.
    ///   - handler: called with each notification on `loop`'s thread.
    /// - Returns: the observation's token; releasing it ends the observation.
    /// - Throws: ``BusNotificationError/invalidName(_:)`` / ``BusNotificationError/invalidObject(_:)``,
    ///   ``BusNotificationError/disconnected``, ``BusNotificationError/timedOut``, or the bus's refusal.
    ///
    /// Thread-safety: any thread.
    public func addObserver(forName name: Notification.Name?, object: String? = nil,
                            suspensionBehavior: BusSuspensionBehavior = .coalesce, on loop: PortRunLoop = .main,
                            using handler: @escaping @Sendable (Notification) -> Void) throws(BusNotificationError) -> BusObservation {
        try observeNotifications(name: name, object: object, behavior: suspensionBehavior,
                                 target: .handler(loop, handler), label: "\(name?.rawValue ?? "any name") on \(loop.name)")
    }

    /// Observes notifications named `name` (nil: every name) with object `object` (nil: any),
    /// calling `handler` on `loop`'s thread with the userInfo as typed ``BusFields``: read by
    /// comparing strings, with no `[AnyHashable: Any]` made for it (unless another observation
    /// wants one). Whoever posted it, and as fields or as a property list, the notification is the
    /// same. Otherwise as ``addObserver(forName:object:suspensionBehavior:on:using:)``.
    ///
    /// Thread-safety: any thread.
    public func addFieldsObserver(forName name: Notification.Name?, object: String? = nil,
                                  suspensionBehavior: BusSuspensionBehavior = .coalesce, on loop: PortRunLoop = .main,
                                  using handler: @escaping @Sendable (BusNotification) -> Void) throws(BusNotificationError) -> BusObservation {
        try observeNotifications(name: name, object: object, behavior: suspensionBehavior,
                                 target: .fields(loop, handler), label: "\(name?.rawValue ?? "any name") on \(loop.name), as fields")
    }

    /// Observes notifications on behalf of `observer`, held weakly, calling
    /// `handler(observer, notification)` on `loop`'s thread:
    /// `center.addObserver(self, name: .settingsChanged) { me, note in me.settingsChanged(note) }`.
    /// The observation also ends when `observer` is deallocated (at its next delivery), or on
    /// ``removeObserver(_:name:object:)``. Otherwise as ``addObserver(forName:object:suspensionBehavior:on:using:)``.
    ///
    /// Thread-safety: any thread; `observer` is loaded from its weak reference on `loop`'s thread only.
    public func addObserver<Observer: AnyObject>(_ observer: Observer, name: Notification.Name?, object: String? = nil,
                                                 suspensionBehavior: BusSuspensionBehavior = .coalesce, on loop: PortRunLoop = .main,
                                                 _ handler: @escaping @Sendable (Observer, Notification) -> Void) throws(BusNotificationError) -> BusObservation {
        let target = BusObservationRecord.Target.observer(loop, WeakObserver(observer)) { object, note in
            handler(unsafeDowncast(object, to: Observer.self), note)
        }
        return try observeNotifications(name: name, object: object, behavior: suspensionBehavior, target: target,
                                        label: "\(Observer.self) for \(name?.rawValue ?? "any name") on \(loop.name)")
    }

    /// Forwards notifications named `name` (nil: every name) with object `object` (nil: any) into
    /// `center`, posting each there from ``loop``'s thread, so its observers receive them on their
    /// own threads as if posted locally (`object` is the string, or nil). Otherwise as
    /// ``addObserver(forName:object:suspensionBehavior:on:using:)``.
    ///
    /// Thread-safety: any thread.
    public func addObserver(forName name: Notification.Name?, object: String? = nil,
                            suspensionBehavior: BusSuspensionBehavior = .coalesce,
                            forwardingTo center: ThreadNotificationCenter) throws(BusNotificationError) -> BusObservation {
        try observeNotifications(name: name, object: object, behavior: suspensionBehavior, target: .forward(center),
                                 label: "\(name?.rawValue ?? "any name") into a ThreadNotificationCenter")
    }

    /// Observes the transport's signals of type `Signal` that `accepts` (messages of the bus other
    /// than notifications, which the transport hands over through
    /// ``TransportDelegate/transportReceived(signal:)``), calling `handler` on `loop`'s thread.
    /// `subscription` is what the transport made for them at the bus, withdrawn when the
    /// observation ends. Suspension does not apply to signals.
    ///
    /// Thread-safety: any thread.
    package func observeSignals<Signal: Sendable>(_: Signal.Type, subscription: TransportSubscriptionToken, on loop: PortRunLoop, label: String,
                                                  accepting accepts: @escaping @Sendable (Signal) -> Bool,
                                                  using handler: @escaping @Sendable (Signal) -> Void) -> BusObservation {
        let filter = BusObservationRecord.Filter.signals { signal in
            guard let signal = signal as? Signal else { return false }
            return accepts(signal)
        }
        let target = BusObservationRecord.Target.signal(loop) { signal in
            if let signal = signal as? Signal { handler(signal) }
        }
        return register(BusObservationRecord(filter: filter, target: target, subscription: subscription, label: label))
    }

    /// Calls `handler` on `loop`'s thread when the bus connection is lost (the daemon exited or
    /// closed it) with ``BusNotificationError/disconnected``; at once (queued) if it already is.
    /// Once per loss: a transport that reconnects (Redis) calls it again at its next loss. Not
    /// called for ``close()``, nor when added after it.
    ///
    /// Thread-safety: any thread.
    public func addDisconnectionObserver(on loop: PortRunLoop = .main,
                                         using handler: @escaping @Sendable (BusNotificationError) -> Void) -> BusObservation {
        let record = BusObservationRecord(filter: .disconnection, target: .disconnection(loop, handler), subscription: nil,
                                          label: "disconnection on \(loop.name)")
        let observation = register(record)
        if !transport.isConnected, !state.withLock({ $0.closed }) { deliverDisconnection(to: record) }
        return observation
    }

    /// Ends `observation` (as ``BusObservation/remove()``).
    ///
    /// Thread-safety: any thread.
    public func removeObserver(_ observation: BusObservation) {
        end(observation.record)
    }

    /// Ends every observation made for `observer` with name `name` (nil: any) and object `object`
    /// (nil: any) — Apple's `removeObserver(_:name:object:)`.
    ///
    /// Thread-safety: any thread.
    public func removeObserver(_ observer: AnyObject, name: Notification.Name? = nil, object: String? = nil) {
        let records = state.withLock { $0.observations }
        for record in records where record.observer === observer {
            guard case .notifications(let observedName, let observedObject, _) = record.filter else { continue }
            if let name, observedName != name.rawValue { continue }
            if let object, observedObject != object { continue }
            end(record)
        }
    }

    // MARK: Internals

    private func observeNotifications(name: Notification.Name?, object: String?, behavior: BusSuspensionBehavior,
                                      target: BusObservationRecord.Target, label: String) throws(BusNotificationError) -> BusObservation {
        if let name { try Self.validate(name: name.rawValue) }
        if let object { try Self.validate(object: object) }
        let token = try transport.subscribe(.notifications(name: name?.rawValue, object: object))
        let record = BusObservationRecord(filter: .notifications(name: name?.rawValue, object: object, behavior: behavior),
                                          target: target, subscription: token, label: label)
        let observation = register(record)
        transport.subscriptionRegistered(token)
        return observation
    }

    private func register(_ record: BusObservationRecord) -> BusObservation {
        state.withLock { state in
            state.observations.append(record)
            storeSignalObservationCount(state.observations)
        }
        return BusObservation(record, center: self)
    }

    /// Ends `record`: no delivery starts after this; its subscription is withdrawn.
    func end(_ record: BusObservationRecord) {
        guard record.deactivate() else { return }
        state.withLock { state in
            state.observations.removeAll { $0 === record }
            storeSignalObservationCount(state.observations)
        }
        if let token = record.subscription { transport.unsubscribe(token) }
    }

    /// Updates ``signalObservationCount`` from `observations` (under `state`'s lock).
    private func storeSignalObservationCount(_ observations: [BusObservationRecord]) {
        var count = 0
        for record in observations {
            if case .signals = record.filter { count += 1 }
        }
        signalObservationCount.store(count, ordering: .relaxed)
    }
}
