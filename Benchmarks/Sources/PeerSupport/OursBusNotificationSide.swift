import Foundation
import PortRunLoopDBus
import PortRunLoopKit
import PortRunLoopRedis
import Synchronization

/// Our side of the bus-notification scenarios: a `BusNotificationCenter` (D-Bus or Redis) whose
/// connection runs on a `RunLoopThread`, observing on that same loop, so a notification is handled
/// right after it is read, as the raw C floor handles it in its filter or read loop (no perform
/// hop to another thread in either).
///
/// Thread-safety: one driving thread; the handler runs on the center's loop thread and shares only
/// ``Counters`` (its locks and semaphores) with it.
final class OursBusNotificationSide: BusNotificationSide, @unchecked Sendable {
    private let thread: RunLoopThread
    private let center: BusNotificationCenter
    private let role: BusNotificationRole
    /// Posts the object "bench-peer" and no userInfo (``BusNotificationPeer/bare``).
    private let bare: Bool
    /// Posts and observes the userInfo as `BusFields` (``BusNotificationPeer/fields``).
    private let fields: Bool
    private var observation: BusObservation?
    private let counters = Counters()

    /// What the handler shares with the driving thread: a waiter is signalled exactly once, when
    /// `received` reaches its target.
    private final class Counters: Sendable {
        private struct State {
            var received = 0
            var target: Int?
        }
        private let state = Mutex(State())
        private let reached = DispatchSemaphore(value: 0)
        let disconnected = DispatchSemaphore(value: 0)
        /// The round trips under way (pinger only): run on the loop, each answer posts the next ping.
        let pings = Mutex(Pings())

        /// `@unchecked Sendable` for `latencies`: the driving thread's buffer, written under `pings`'
        /// lock only while a sample's round trips run (the driving thread waits meanwhile).
        struct Pings: @unchecked Sendable {
            var latencies: UnsafeMutablePointer<Int64>?
            var count = 0
            var next = 0
            var sentAt: UInt64 = 0
            var failure: String?
        }

        /// The handler: one more received.
        func received() {
            let wake = state.withLock { state -> Bool in
                state.received += 1
                guard let target = state.target, state.received >= target else { return false }
                state.target = nil
                return true
            }
            if wake { reached.signal() }
        }

        var count: Int { state.withLock { $0.received } }

        /// Waits until `total` have been received; false after `timeout`.
        func wait(until total: Int, timeout: DispatchTime) -> Bool {
            let done = state.withLock { state -> Bool in
                if state.received >= total { return true }
                state.target = total
                return false
            }
            if done { return true }
            if reached.wait(timeout: timeout) == .success { return true }
            // Timed out: withdraw the target; a signal sent meanwhile is taken back.
            let signalled = state.withLock { state -> Bool in
                defer { state.target = nil }
                return state.target == nil
            }
            if signalled { reached.wait() }
            return signalled
        }
    }

    convenience init(dbus address: String, role: BusNotificationRole, fields: Bool = false) throws {
        let thread = try RunLoopThread(name: "bench-bus")
        do {
            try self.init(thread: thread, center: BusNotificationCenter(endpoint: .dbus(address: address), loop: thread.loop), role: role,
                          fields: fields)
        } catch {
            thread.stop()
            throw error
        }
    }

    convenience init(redisPort port: Int, role: BusNotificationRole, bare: Bool = false, fields: Bool = false,
                     durable: Bool = false) throws {
        let thread = try RunLoopThread(name: "bench-bus")
        var endpoint = RedisEndpoint(port: port)
        if durable {
            // Every bench name durable; a group of its own per process (each process gets every entry).
            endpoint.durable = RedisDurableNotifications(
                names: [.init(BusNotificationNames.burst), .init(BusNotificationNames.ping), .init(BusNotificationNames.pong)],
                group: "bench-ours-\(getpid())", consumer: "c")
        }
        do {
            try self.init(thread: thread, center: BusNotificationCenter(redis: endpoint, loop: thread.loop),
                          role: role, bare: bare, fields: fields)
        } catch {
            thread.stop()
            throw error
        }
    }

    private init(thread: RunLoopThread, center: BusNotificationCenter, role: BusNotificationRole, bare: Bool = false,
                 fields: Bool = false) throws {
        self.thread = thread
        self.center = center
        self.role = role
        self.bare = bare
        self.fields = fields
        guard let observed = role.observed else { return }
        let counters = self.counters
        let answer = role == .answerer ? Notification.Name(BusNotificationNames.pong) : nil
        let ping = Notification.Name(BusNotificationNames.ping)
        let pinger = role == .pinger
        // What each side does with one notification, whichever form its userInfo takes: read
        // `seq`, answer a ping, or record a pong's latency and send the next ping.
        let handle: @Sendable (Int, (Notification.Name, Int) throws(BusNotificationError) -> Void) -> Void = { seq, post in
            if let answer {
                try? post(answer, seq)
            }
            if pinger {
                // The answer to ping `seq`: record its latency and send the next ping from here.
                let now = ProcessCounters.nanoseconds()
                let next = counters.pings.withLock { pings -> Int? in
                    guard let latencies = pings.latencies, seq == pings.next else {
                        pings.failure = pings.failure ?? "answer \(seq) while waiting for \(pings.next)"
                        return nil
                    }
                    latencies[seq] = Int64(now - pings.sentAt)
                    pings.next += 1
                    pings.sentAt = ProcessCounters.nanoseconds()
                    return pings.next < pings.count ? pings.next : nil
                }
                if let next {
                    do {
                        try post(ping, next)
                    } catch {
                        counters.pings.withLock { $0.failure = "\(error)" }
                    }
                    return
                }
            }
            counters.received()
        }
        if fields {
            observation = try center.addFieldsObserver(forName: Notification.Name(observed), on: thread.loop) { [center] note in
                handle(note.fields["seq"]?.intValue ?? -1) { name, seq throws(BusNotificationError) in
                    try center.post(name: name, fields: ["from": "bench-peer", "seq": .int(seq)])
                }
            }
        } else {
            observation = try center.addObserver(forName: Notification.Name(observed), on: thread.loop) { [center] note in
                handle(note.userInfo?["seq"] as? Int ?? -1) { name, seq throws(BusNotificationError) in
                    try center.post(name: name, userInfo: ["from": "bench-peer", "seq": seq])
                }
            }
        }
    }

    func postBurst(_ count: Int) throws {
        let name = Notification.Name(BusNotificationNames.burst)
        if bare {
            for _ in 0..<count { try center.post(name: name, object: "bench-peer") }
        } else if fields {
            for seq in 0..<count {
                try center.post(name: name, fields: ["from": "bench-peer", "seq": .int(seq)])
            }
        } else {
            for seq in 0..<count {
                try center.post(name: name, userInfo: ["from": "bench-peer", "seq": seq])
            }
        }
        try center.flushRedisPosts(timeout: .seconds(30))  // a D-Bus center returns at once
    }

    func waitForReceived(_ total: Int) throws {
        guard counters.wait(until: total, timeout: .now() + 30) else {
            throw CrossProcessFailure("ours: \(counters.count) of \(total) notifications within 30 s")
        }
    }

    /// The round trips run on the center's loop, as the raw side's run on its one thread: this
    /// thread posts the first ping, each answer's handler records its latency and posts the next,
    /// and the last answer wakes this thread (one cross-thread hand-off per sample, not per round
    /// trip).
    func roundTrips(_ count: Int, latencies: UnsafeMutablePointer<Int64>) throws {
        precondition(count > 0)
        let expected = counters.count + 1  // the last answer is counted; the others post the next ping
        counters.pings.withLock { $0 = Counters.Pings(latencies: latencies, count: count, next: 0, sentAt: ProcessCounters.nanoseconds()) }
        if fields {
            try center.post(name: Notification.Name(BusNotificationNames.ping), fields: ["from": "bench-peer", "seq": 0])
        } else {
            try center.post(name: Notification.Name(BusNotificationNames.ping), userInfo: ["from": "bench-peer", "seq": 0])
        }
        let answered = counters.wait(until: expected, timeout: .now() + .seconds(5 + count / 100))
        let (next, failure) = counters.pings.withLock { pings in
            defer { pings = Counters.Pings() }
            return (pings.next, pings.failure)
        }
        if let failure { throw CrossProcessFailure("ours: \(failure)") }
        guard answered, next == count else { throw CrossProcessFailure("ours: \(next) of \(count) round trips answered") }
    }

    func serveAnswers() throws {
        let counters = self.counters
        let watch = center.addDisconnectionObserver(on: thread.loop) { _ in counters.disconnected.signal() }
        counters.disconnected.wait()
        watch.remove()
    }

    func close() {
        observation?.remove()
        center.close()
        thread.stop()
    }
}
