#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

extension ThreadNotificationCenter {
    /// Re-posts on this center every notification that `source` (a Foundation center; default: the
    /// default one) delivers for `name` (nil: every name) from `sender` (nil: any sender; objects by
    /// identity, `Hashable` values by equality — the value filter is applied here, since Foundation's
    /// center on Linux never matches value-type senders).
    ///
    /// The re-post happens on the thread that posted on `source`, with ``post(_:)``'s semantics: this
    /// center's observers on that thread are called inline, observers on other threads get it through
    /// their queues, in order. This is the article's "register normally, capture the notification on the
    /// posting thread, redirect it" for every observer of this center at once.
    ///
    /// - Returns: a token; releasing it or calling ``NotificationObservation/remove()`` removes the
    ///   bridge. Once removal returns, no re-post starts (Foundation may still be running the bridge on
    ///   another thread at that instant; ``NotificationObservation/waitForRunningHandlers(timeout:)``
    ///   waits for that re-post, and its inline observers, to finish).
    ///
    /// Thread-safety: any thread.
    public func bridge(from source: NotificationCenter = .default, name: Notification.Name?,
                       object sender: Any? = nil) -> NotificationObservation {
        let filter = SenderFilter(sender, caller: "ThreadNotificationCenter.bridge(from:name:object:)")
        let gate = DeliveryGate()
        let token = source.addObserver(forName: name, object: filter.foundationObject, queue: nil) { [weak self] note in
            // Foundation calls the block on whatever thread posted.
            guard gate.tryEnterOnAnyThread() else { return }
            defer { gate.exitOnAnyThread() }
            guard filter.matches(SenderKey(note.object)), let self else { return }
            self.post(note)
        }
        return NotificationObservation(FoundationObserverRemoval(source: source, token: token, gate: gate, record: nil),
                                       label: "bridge of \(name?.rawValue ?? "any name")")
    }

    /// Observes `source` (a Foundation center) for `name` from `sender` and delivers each such
    /// notification to `handler` on `loop`'s thread, in `modes`: the article's technique in one call.
    /// Delivery follows this center's rules (inline when posted on `loop`'s thread, queued in post
    /// order otherwise) and the token follows ``NotificationObservation``'s removal guarantee. The
    /// observation lives outside this center's tables: only posts on `source` reach it.
    ///
    /// Thread-safety: any thread.
    public func addObserver(forName name: Notification.Name?, object sender: Any? = nil, postedOn source: NotificationCenter,
                            on loop: PortRunLoop = .current, inModes modes: [RunLoop.Mode] = [.common],
                            using handler: @escaping @Sendable (Notification) -> Void) -> NotificationObservation {
        let caller = "ThreadNotificationCenter.addObserver(forName:object:postedOn:on:inModes:using:)"
        let filter = SenderFilter(sender, caller: caller)
        let record = makeRecord(name: name, sender: filter, loop: loop, modes: modes, observer: nil,
                                caller: caller) { _, note in handler(note) }
        let label = "\(name?.rawValue ?? "any name") from a Foundation center on \(loop.name)"
        let gate = DeliveryGate()
        guard !loop.isShutDown else {
            // Inactive from the start, and nothing is left installed in the Foundation center.
            record.end()
            gate.close()
            return NotificationObservation(FoundationObserverRemoval(source: source, token: nil, gate: gate, record: record),
                                           label: label)
        }
        // Its own plan (made once): the observation lives outside the center's tables.
        let plan = DispatchPlan(name: name ?? Notification.Name(""), named: [record], anyName: [])
        let token = source.addObserver(forName: name, object: filter.foundationObject, queue: nil) { [weak self] note in
            // Foundation calls the block on whatever thread posted.
            guard gate.tryEnterOnAnyThread() else { return }
            defer { gate.exitOnAnyThread() }
            guard record.isActive, filter.matches(SenderKey(note.object)), let self else { return }
            _ = try? self.deliver(note, by: plan, synchronous: false, deadline: .infinity)
        }
        return NotificationObservation(FoundationObserverRemoval(source: source, token: token, gate: gate, record: record),
                                       label: label)
    }
}

/// Removes a Foundation observer and closes the gate its block runs behind (and ends its record).
///
/// Thread-safety: `@unchecked Sendable`: Foundation's token is only handed back to its own
/// (thread-safe) center.
private final class FoundationObserverRemoval: ObservationRegistration, @unchecked Sendable {
    private let source: NotificationCenter
    private let token: (any NSObjectProtocol)?
    private let gate: DeliveryGate
    private let record: ObserverRecord?

    init(source: NotificationCenter, token: (any NSObjectProtocol)?, gate: DeliveryGate, record: ObserverRecord?) {
        self.source = source
        self.token = token
        self.gate = gate
        self.record = record
    }

    /// A redirect to a loop ends with the loop too (its record).
    var isObserving: Bool { !gate.isClosed && (record?.isObserving ?? true) }

    func end() {
        guard gate.close() else { return }
        record?.end()
        if let token { source.removeObserver(token) }
    }

    func waitForRunningHandlers(deadline: Double) -> Bool {
        // The block may be running on the calling thread itself (an inline observer of the re-post
        // waiting for its own bridge): those calls are further down this stack, not waited for.
        guard gate.waitForHandlers(deadlineMonotonic: deadline, excluding: gate.callsHeldByCurrentThread) else { return false }
        return record?.waitForRunningHandlers(deadline: deadline) ?? true
    }
}
