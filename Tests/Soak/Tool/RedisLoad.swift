import Foundation
import PortRunLoopDaemons
import PortRunLoopKit
import PortRunLoopRedis
import Synchronization

/// Distributed notifications over a private `redis-server`, killed with SIGKILL and started again
/// on the same port every `restartEvery` seconds.
///
/// - Center A (its own loop thread) posts numbered notifications and observes them, and those of
///   center B (another loop thread), on hub 2. A poster thread alternates between the two.
/// - RedisNotifications.md, "Losing the server": while connected nothing is lost; posts made while
///   disconnected are kept and published after the reconnection, once the subscriptions are back;
///   posts in flight at the loss may or may not have been published (`unconfirmedAtDisconnect`);
///   messages published while a subscriber was away are not received. So a gap in A's own posts
///   is allowed only near an outage and only as many as A counted unconfirmed (or dropped over its
///   buffer) — `redis-unconfirmed` drops, the rest lost; a gap in B's posts near an outage is a
///   `redis-outage` drop (published while A's subscriber was away, or unconfirmed at B); a gap
///   anywhere else is lost. "Near an outage": posted from 2 s before the kill to 2 s after both
///   centers were connected again.
///
/// Thread-safety: `@unchecked Sendable`: the ``SoakLoad`` members and the properties they set run
/// on the main thread; the poster and the observer use only `Sendable` members.
final class RedisLoad: SoakLoad, @unchecked Sendable {
    static let noteName = Notification.Name("soak.redis")
    let name = "redis"
    private let hubs: SoakHubs
    private let ledger: SoakLedger
    private let stopFlag = StopFlag()
    private let rate: Double
    private let restartEvery: Double
    private let launcher: [String]
    private var server: RedisServer?
    private var threads: [RunLoopThread] = []
    private var centers: [BusNotificationCenter] = []
    private var observation: BusObservation?
    private var poster: PacedThread?
    private var checks: [SequenceCheck] = []
    /// When each recent post was made (seconds since the start), by stream and number modulo 65,536.
    private let postTimes = TracedMutex([[Double]](repeating: [Double](repeating: 0, count: 65_536), count: 2))
    /// The outages: from the kill to both centers connected again (nil: not yet).
    private let outages = TracedMutex<[(start: Double, end: Double?)]>([])
    /// A's gaps near an outage, not yet weighed against its unconfirmed posts.
    private let ownGaps = SoakCounter()
    private var ownGapsSettled = 0
    private var lastRestart = 0.0
    private let clock = ContinuousClock.now

    init(hubs: SoakHubs, ledger: SoakLedger, rate: Double, restartEvery: Double, launcher: [String]) {
        self.hubs = hubs
        self.ledger = ledger
        self.rate = rate
        self.restartEvery = restartEvery
        self.launcher = launcher
    }

    private var now: Double { (ContinuousClock.now - clock).seconds }

    func start() throws {
        let server = try RedisServer(launcher: launcher)
        self.server = server
        SoakRun.say("soak: started redis-server pid \(server.pid ?? -1)")
        for name in ["a", "b"] {
            let thread = try SoakLoops.thread("soak-redis-\(name)")
            threads.append(thread)
            centers.append(try BusNotificationCenter(redis: server.endpoint, loop: thread.loop))
        }
        for (stream, name) in ["a", "b"].enumerated() {
            checks.append(SequenceCheck("redis: center \(name) → hub 2", ledger: ledger) { [weak self] gap in self?.classify(gap, stream: stream) })
        }
        let checks = self.checks
        let ledger = self.ledger
        observation = try centers[0].addFieldsObserver(forName: Self.noteName, suspensionBehavior: .deliverImmediately, on: hubs[2]) { note in
            guard let stream = note.object.flatMap({ ["a": 0, "b": 1][$0] }), let sequence = note.fields["seq"]?.intValue else {
                return ledger.violation("redis: an unnumbered notification")
            }
            checks[stream].received(UInt64(sequence))
        }
        let centers = self.centers
        poster = PacedThread("soak-redis-poster", perSecond: 300 * rate, stop: stopFlag) { [self] step in
            let stream = step % 2
            let check = checks[stream]
            let sequence = check.next
            postTimes.withLock { $0[stream][Int(sequence % 65_536)] = now }
            do {
                try centers[stream].post(name: Self.noteName, object: stream == 0 ? "a" : "b", fields: ["seq": .int(Int(sequence))])
                check.accepted()
            } catch {
                ledger.violation("redis: center \(stream == 0 ? "a" : "b")'s post failed: \(error)")
            }
        }
    }

    /// Accounts for the numbers a stream skipped (see the type's comment).
    private func classify(_ gap: Range<UInt64>, stream: Int) {
        let windows = outages.withLock { $0.map { ($0.start - 2, ($0.end ?? .infinity) + 2) } }
        let times = postTimes.withLock { table in gap.map { table[stream][Int($0 % 65_536)] } }
        let near = times.filter { time in windows.contains { $0.0 <= time && time <= $0.1 } }.count
        let far = gap.count - near
        ledger.lost(far, "redis: center \(stream == 0 ? "a" : "b")'s posts \(gap) never came, \(far) of them far from any outage")
        if stream == 0 { ownGaps.add(near) } else { ledger.dropped("redis-outage", near) }
    }

    func supervise(elapsed: Double) {
        guard restartEvery > 0, elapsed - lastRestart >= restartEvery, !stopFlag.isRaised, let server else { return }
        lastRestart = elapsed
        outages.withLock { $0.append((now, nil)) }
        server.kill()
        var started = false
        for _ in 0..<20 where !started {
            do { try server.restart(); started = true } catch { usleep(250_000) }
        }
        guard started else { return ledger.violation("redis: the server could not be started again on port \(server.port)") }
        ledger.restarted("redis")
        SoakRun.say("soak: started redis-server pid \(server.pid ?? -1)")
        let back = waitUntil(seconds: 30) { centers.allSatisfy { $0.redisState == .connected } }
        if !back { ledger.violation("redis: the centers were not connected again within 30 s of the restart") }
        let end = now
        outages.withLock { $0[$0.count - 1].end = end }
    }

    /// A's gaps near outages beyond what it counted unconfirmed or dropped are lost.
    func report() {
        guard let metrics = centers.first?.redisMetrics else { return }
        let allowed = metrics.unconfirmedAtDisconnect + metrics.droppedWhileDisconnected
        let gaps = ownGaps.value
        let excess = max(0, gaps - allowed) - max(0, ownGapsSettled - allowed)
        ledger.dropped("redis-unconfirmed", min(gaps, allowed) - min(ownGapsSettled, allowed))
        ledger.lost(excess, "redis: \(gaps) of center a's own posts never came near outages, more than the \(allowed) it counted unconfirmed or dropped")
        ownGapsSettled = gaps
    }

    func stop() {
        stopFlag.raise()
        if let poster, !poster.join() { ledger.violation("redis: the poster did not stop within 60 s") }
        for center in centers { try? center.flushRedisPosts(timeout: .seconds(10)) }
        if !waitUntil(seconds: 10, { checks.allSatisfy { $0.outstanding == 0 } }) {
            ledger.note("redis: posts still outstanding 10 s after the poster stopped")
        }
        for check in checks { check.finish() }
        report()
        observation?.remove()
        for center in centers { center.close() }
    }

    func tearDown() {
        for thread in threads { thread.stop() }
        server?.stop()
    }

    /// The centers' transport counts, for the summary.
    var metricsSummary: String {
        zip(["a", "b"], centers).map { name, center in "\(name): \(center.redisMetrics.map { "\($0)" } ?? "-")" }.joined(separator: "; ")
    }
}
