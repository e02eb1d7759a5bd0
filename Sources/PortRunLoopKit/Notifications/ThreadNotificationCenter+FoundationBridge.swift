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
    /// their queues, in order. This is the seed's "register normally, capture the notification on the
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
        let gate = ThreadTrackingGate()
        let token = source.addObserver(forName: name, object: filter.foundationObject, queue: nil) { [weak self] note in
            guard gate.enter() else { return }
            defer { gate.exit() }
            guard filter.matches(SenderKey(note.object)), let self else { return }
            self.post(note)
        }
        return NotificationObservation(FoundationObserverRemoval(source: source, token: token, gate: gate, record: nil),
                                       label: "bridge of \(name?.rawValue ?? "any name")")
    }

    /// Observes `source` (a Foundation center) for `name` from `sender` and delivers each such
    /// notification to `handler` on `loop`'s thread, in `modes`: the seed's technique in one call.
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
        if loop.isShutDown { record.end() }
        let gate = ThreadTrackingGate()
        let token = source.addObserver(forName: name, object: filter.foundationObject, queue: nil) { [weak self] note in
            guard gate.enter() else { return }
            defer { gate.exit() }
            guard record.isActive, filter.matches(SenderKey(note.object)), let self else { return }
            _ = try? self.dispatch(note, to: [record], synchronous: false, deadline: .infinity)
        }
        return NotificationObservation(FoundationObserverRemoval(source: source, token: token, gate: gate, record: record),
                                       label: "\(name?.rawValue ?? "any name") from a Foundation center on \(loop.name)")
    }
}

/// Removes a Foundation observer and closes the gate its block runs behind (and ends its record).
///
/// Thread-safety: `@unchecked Sendable`: Foundation's token is only handed back to its own
/// (thread-safe) center.
private final class FoundationObserverRemoval: ObservationRegistration, @unchecked Sendable {
    private let source: NotificationCenter
    private let token: any NSObjectProtocol
    private let gate: ThreadTrackingGate
    private let record: ObserverRecord?

    init(source: NotificationCenter, token: any NSObjectProtocol, gate: ThreadTrackingGate, record: ObserverRecord?) {
        self.source = source
        self.token = token
        self.gate = gate
        self.record = record
    }

    var isActive: Bool { gate.isOpen }

    func end() {
        guard gate.close() else { return }
        record?.end()
        source.removeObserver(token)
    }

    func waitForRunningHandlers(deadline: Double) -> Bool {
        guard gate.waitForOtherThreads(deadline: deadline) else { return false }
        return record?.waitForRunningHandlers(deadline: deadline) ?? true
    }
}

/// A gate like `DeliveryGate` that also knows *which* threads are inside, because a Foundation
/// observer block runs on whatever thread posted — possibly the thread that later waits for it.
///
/// Thread-safety: fully thread-safe.
private final class ThreadTrackingGate: Sendable {
    private struct State {
        var closed = false
        var inside: [pthread_t] = []
    }

    private let state = TracedMutex(State())

    var isOpen: Bool { state.withLock { !$0.closed } }

    func enter() -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            state.inside.append(pthread_self())
            return true
        }
    }

    func exit() {
        state.withLock { state in
            let me = pthread_self()
            if let index = state.inside.lastIndex(where: { pthread_equal($0, me) != 0 }) { state.inside.remove(at: index) }
        }
        state.broadcast()
    }

    /// Closes the gate; true if this call closed it.
    func close() -> Bool {
        state.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
    }

    /// Waits until no thread other than the caller is inside. False on timeout.
    func waitForOtherThreads(deadline: Double) -> Bool {
        let me = pthread_self()
        return state.wait(untilMonotonic: deadline) { state in
            !state.inside.contains(where: { pthread_equal($0, me) == 0 })
        }
    }
}
