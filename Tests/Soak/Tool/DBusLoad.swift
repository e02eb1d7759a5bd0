import Foundation
import PortRunLoopDaemons
import PortRunLoopDBus
import PortRunLoopKit
import Synchronization

/// Distributed notifications over a private `dbus-daemon`.
///
/// - A center on its own loop thread posts numbered notifications from a poster thread (fields
///   `seq`) and observes them on hub 1 (through the bus: a process receives its own posts): while
///   connected, every post arrives, in order (the D-Bus transport keeps one connection's order).
/// - Every 10 s a second center, on a new loop thread, is made, posts a burst of 100, and is
///   closed (with its thread stopped) 10 s later: its posts must have arrived, except those its
///   `close()` counted as discarded unsent (`dbus-closed-unsent`).
///
/// The daemon is not restarted: a D-Bus center does not reconnect (DBusNotifications.md, "The bus
/// goes away": make a new center), so a killed daemon would end the load rather than test it.
///
/// Thread-safety: `@unchecked Sendable`: the ``SoakLoad`` members and the properties they set run
/// on the main thread; the poster uses only `Sendable` members.
final class DBusLoad: SoakLoad, @unchecked Sendable {
    static let noteName = Notification.Name("soak.dbus")
    let name = "dbus"
    private let hubs: SoakHubs
    private let ledger: SoakLedger
    private let stopFlag = StopFlag()
    private let rate: Double
    private let launcher: [String]
    private var bus: PrivateBus?
    private var thread: RunLoopThread?
    private var center: BusNotificationCenter?
    private var observation: BusObservation?
    private var poster: PacedThread?
    /// Streams by poster name: `p` (the poster thread), `b<n>` (the n-th short-lived center).
    private let checks = Shared<[String: SequenceCheck]>([:])
    private var burst: (center: BusNotificationCenter, thread: RunLoopThread, check: SequenceCheck, name: String)?
    private var bursts = 0
    private var lastBurst = 0.0

    init(hubs: SoakHubs, ledger: SoakLedger, rate: Double, launcher: [String]) {
        self.hubs = hubs
        self.ledger = ledger
        self.rate = rate
        self.launcher = launcher
    }

    func start() throws {
        let bus = try PrivateBus(launcher: launcher)
        self.bus = bus
        SoakRun.say("soak: started dbus-daemon pid \(bus.pid)")
        let thread = try SoakLoops.thread("soak-dbus-center")
        self.thread = thread
        let center = try BusNotificationCenter(endpoint: bus.endpoint, loop: thread.loop)
        self.center = center
        let check = SequenceCheck("dbus: poster → hub 1", ledger: ledger)
        checks.withLock { $0["p"] = check }
        let checks = self.checks
        let ledger = self.ledger
        observation = try center.addFieldsObserver(forName: Self.noteName, suspensionBehavior: .deliverImmediately, on: hubs[1]) { note in
            guard let poster = note.object, let sequence = note.fields["seq"]?.intValue,
                  let check = checks.withLock({ $0[poster] }) else { return ledger.violation("dbus: an unnumbered notification") }
            check.received(UInt64(sequence))
        }
        poster = PacedThread("soak-dbus-poster", perSecond: 200 * rate, stop: stopFlag) { _ in
            let sequence = check.next
            do {
                try center.post(name: Self.noteName, object: "p", fields: ["seq": .int(Int(sequence))])
                check.accepted()
            } catch {
                ledger.violation("dbus: a post failed: \(error)")
            }
        }
    }

    func supervise(elapsed: Double) {
        guard elapsed - lastBurst >= 10, !stopFlag.isRaised, let bus else { return }
        lastBurst = elapsed
        endBurst()
        bursts += 1
        let name = "b\(bursts)"
        do {
            let thread = try SoakLoops.thread("soak-dbus-burst-\(bursts)")
            let center = try BusNotificationCenter(endpoint: bus.endpoint, loop: thread.loop)
            let check = SequenceCheck("dbus: center \(name) → hub 1", ledger: ledger)
            checks.withLock { $0[name] = check }
            for _ in 0..<100 {
                try center.post(name: Self.noteName, object: name, fields: ["seq": .int(Int(check.next))])
                check.accepted()
            }
            burst = (center, thread, check, name)
            ledger.restarted("dbus-centers")
        } catch {
            ledger.violation("dbus: a short-lived center failed: \(error)")
        }
    }

    /// Closes the short-lived center, stops its thread, and settles its posts.
    private func endBurst() {
        guard let burst else { return }
        self.burst = nil
        waitUntil(seconds: 10) { burst.check.outstanding == 0 }
        burst.center.close()
        burst.thread.stop()
        let unsent = burst.center.metrics.postsDiscardedUnsent
        let missing = burst.check.close()
        ledger.dropped("dbus-closed-unsent", min(missing, unsent))
        ledger.lost(missing - min(missing, unsent), "dbus: \(missing - min(missing, unsent)) of center \(burst.name)'s posts never came")
        checks.withLock { _ = $0.removeValue(forKey: burst.name) }
    }

    func stop() {
        stopFlag.raise()
        if let poster, !poster.join() { ledger.violation("dbus: the poster did not stop within 60 s") }
        endBurst()
        if let check = checks.withLock({ $0["p"] }) {
            if !waitUntil(seconds: 10, { check.outstanding == 0 }) { ledger.note("dbus: posts still outstanding 10 s after the poster stopped") }
            check.finish()
        }
        observation?.remove()
        center?.close()
    }

    func tearDown() {
        thread?.stop()
        bus?.stop()
    }
}
