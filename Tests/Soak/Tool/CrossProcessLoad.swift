import Foundation
import PortRunLoopDaemons
import PortRunLoopKit
import Synchronization

/// Cross-process ports with a second real process (this program in its `--child` mode), killed
/// with SIGKILL and started again every `restartEvery` seconds.
///
/// - This process publishes `parent` and answers the peer's requests (which the peer checks: a
///   request that got a reply must get its own echo back); the peer publishes `child-<n>` (n: its
///   incarnation).
/// - Here, one thread makes synchronous requests and waiting one-way sends to the peer, and a task
///   makes `async` requests; a reply must echo its request. Requests that fail while the peer is
///   being killed are `peer-gone` drops, others `request-failed`; one-way messages the peer had not
///   reported when it was killed are `peer-killed` drops; gaps it saw in them are losses.
/// - The peer prints its counts (`STATS …`) twice a second; they are read at each report.
///
/// Thread-safety: `@unchecked Sendable`: the ``SoakLoad`` members and the properties they set run
/// on the main thread; the requesters use only `Sendable` members and their own links.
final class CrossProcessLoad: SoakLoad, @unchecked Sendable {
    let name = "cross-process"
    private let ledger: SoakLedger
    private let stopFlag = StopFlag()
    private let rate: Double
    private let restartEvery: Double
    private let launcher: [String]
    private let directory: String
    private let registry: MessagePortNameRegistry
    private var owner: RunLoopThread?
    private var publication: PublishedMessagePort?
    private var child: StreamingProcess?
    /// The peer's incarnation requesters should talk to, and whether it is being killed.
    private let peer = TracedMutex<(incarnation: Int, alive: Bool)>((0, false))
    /// Per incarnation: one-way messages accepted, and the peer's last counts.
    private let books = TracedMutex<[Int: PeerBooks]>([:])
    private var lastRestart = 0.0
    private var retiring: [(incarnation: Int, settleAt: Double)] = []
    private var requester: PacedThread?
    private var asyncDone: DispatchSemaphore?

    struct PeerBooks {
        var onewayAccepted = 0
        var reported = PeerStats()
    }

    init(ledger: SoakLedger, rate: Double, restartEvery: Double, launcher: [String]) throws {
        self.ledger = ledger
        self.rate = rate
        self.restartEvery = restartEvery
        self.launcher = launcher
        directory = NSTemporaryDirectory() + "portrunloop-soak-\(getpid())-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        registry = MessagePortNameRegistry(directory: directory)
    }

    func start() throws {
        let owner = try SoakLoops.thread("soak-xp-publisher")
        self.owner = owner
        let port = MessagePort(queueLimit: 16)
        let ledger = self.ledger
        let lastSeen = Shared<[UInt64: UInt64]>([:])
        port.setHandler { message in
            guard message.msgid == SoakChild.requestID, let data = message.components.first,
                  let incarnation = Payload.value(data), let sequence = Payload.value(data, at: 1) else {
                return ledger.violation("cross-process: the publisher got a malformed message (msgid \(message.msgid))")
            }
            let earlier = lastSeen.withLock { seen in defer { seen[incarnation] = sequence }; return seen[incarnation] }
            if let earlier, sequence <= earlier { ledger.violation("cross-process: peer \(incarnation)'s request \(sequence) came after \(earlier)") }
            if !message.reply(msgid: SoakChild.replyID, components: message.components, before: Date(timeIntervalSinceNow: 2)) {
                ledger.note("cross-process: a reply to peer \(incarnation) could not be sent within 2 s")
            }
        }
        owner.loop.add(port, forMode: .common)
        publication = try registry.publish(port, as: "parent", on: owner.loop)
        try startPeer(incarnation: 1)
        requester = PacedThread("soak-xp-requester", perSecond: 300 * rate, stop: stopFlag) { [self] step in
            requesterStep(step)
        }
        startAsyncRequester()
    }

    // MARK: The peer process

    /// Starts peer `incarnation` and waits (at most 10 s) until it published its port.
    private func startPeer(incarnation: Int) throws {
        let process = try StreamingProcess(SoakRun.executablePath,
                                           ["--child", directory, "\(incarnation)", "\(getpid())", "\(rate)"], launcher: launcher)
        guard process.wait(for: "READY", seconds: 10) else {
            process.stop()
            throw SoakChildError.notReady(process.output)
        }
        child = process
        SoakRun.say("soak: started peer \(incarnation) pid \(process.pid)")
        books.withLock { $0[incarnation] = PeerBooks() }
        peer.withLock { $0 = (incarnation, true) }
    }

    func supervise(elapsed: Double) {
        for entry in retiring where elapsed >= entry.settleAt { settle(entry.incarnation) }
        retiring.removeAll { elapsed >= $0.settleAt }
        guard restartEvery > 0, elapsed - lastRestart >= restartEvery, !stopFlag.isRaised else { return }
        lastRestart = elapsed
        let incarnation = killPeer()
        retiring.append((incarnation, elapsed + 1))
        do {
            try startPeer(incarnation: incarnation + 1)
            ledger.restarted("peer")
        } catch {
            ledger.violation("cross-process: peer \(incarnation + 1) did not start: \(error)")
        }
    }

    /// Kills the current peer (SIGKILL) after reading its last counts; its incarnation.
    private func killPeer() -> Int {
        let incarnation = peer.withLock { state in state.alive = false; return state.incarnation }
        readCounts()
        child?.stop()
        child = nil
        return incarnation
    }

    /// One-way messages a killed peer had accepted but not reported: `peer-killed` drops.
    private func settle(_ incarnation: Int) {
        guard let entry = books.withLock({ $0.removeValue(forKey: incarnation) }) else { return }
        ledger.dropped("peer-killed", entry.onewayAccepted - entry.reported.oneway - entry.reported.gaps)
    }

    func report() { readCounts() }

    /// Takes the current peer's newest `STATS` line into the books.
    private func readCounts() {
        guard let child else { return }
        let incarnation = peer.withLock { $0.incarnation }
        guard let line = child.output.split(separator: "\n").last(where: { $0.hasPrefix("STATS ") }),
              let now = PeerStats(line: String(line)) else { return }
        let before = books.withLock { books -> PeerStats? in
            guard let before = books[incarnation]?.reported else { return nil }
            books[incarnation]?.reported = now
            return before
        }
        guard let before else { return }
        let done = now.ok - before.ok, failed = now.failed - before.failed, bad = now.bad - before.bad
        ledger.sent(done + failed + bad)
        ledger.delivered(done + (now.oneway - before.oneway))
        ledger.dropped("request-failed", failed)
        ledger.lost(bad, "cross-process: peer \(incarnation) got \(bad) replies that were not its requests' echo")
        ledger.lost(now.gaps - before.gaps, "cross-process: peer \(incarnation) saw gaps in this process's one-way messages")
    }

    // MARK: Requests and one-way messages to the peer

    /// The remote port of the current peer, looked up again when the peer changed or died.
    private final class PeerLink: @unchecked Sendable {
        var port: MessagePort?
        var incarnation = 0
        var sequence: UInt64 = 0
    }

    private func link(_ link: PeerLink) -> MessagePort? {
        let (incarnation, alive) = peer.withLock { ($0.incarnation, $0.alive) }
        if let port = link.port, link.incarnation == incarnation, port.isValid { return port }
        link.port = nil
        guard alive, let port = try? registry.remotePort(named: "child-\(incarnation)") else { return nil }
        if link.incarnation != incarnation { link.sequence = 0 } // a new peer counts from 0
        link.port = port
        link.incarnation = incarnation
        return port
    }

    /// Classifies a failed request: the peer was being killed, or not.
    private func failed(_ link: PeerLink, _ error: any Error) {
        let current = peer.withLock { $0.alive && $0.incarnation == link.incarnation }
        if current {
            ledger.dropped("request-failed")
            ledger.note("cross-process: a request to the live peer \(link.incarnation) failed: \(error)")
        } else {
            ledger.dropped("peer-gone")
        }
        link.port = nil
    }

    private func requesterStep(_ step: Int) {
        let state = requesterLink
        guard let port = link(state) else { return }
        if step % 2 == 0 {
            let sequence = state.sequence
            state.sequence += 1
            if port.send(before: Date(timeIntervalSinceNow: 1), msgid: SoakChild.onewayID, components: [Payload.data(sequence)]) {
                ledger.sent()
                books.withLock { $0[state.incarnation]?.onewayAccepted += 1 }
            } else {
                state.sequence -= 1 // refused: never reached the peer (M3), the number is used again
                ledger.dropped(peer.withLock { $0.alive && $0.incarnation == state.incarnation } ? "send-timed-out" : "peer-gone")
            }
            return
        }
        ledger.sent()
        do {
            let reply = try port.sendRequest(msgid: SoakChild.requestID, components: [Payload.data(UInt64(step))],
                                             sendTimeout: .seconds(1), receiveTimeout: .seconds(5))
            if reply.components.first.flatMap({ Payload.value($0) }) == UInt64(step) {
                ledger.delivered()
            } else {
                ledger.lost(1, "cross-process: the reply to request \(step) was not its echo")
            }
        } catch {
            failed(state, error)
        }
    }

    private let requesterLink = PeerLink()

    private func startAsyncRequester() {
        let done = DispatchSemaphore(value: 0)
        asyncDone = done
        let link = PeerLink()
        let stop = stopFlag
        let perSecond = 100 * rate
        Task.detached { [self] in
            var step: UInt64 = 0
            while !stop.isRaised {
                try? await Task.sleep(for: .milliseconds(Int64(1000 / perSecond)))
                guard let port = self.link(link) else { continue }
                step += 1
                self.ledger.sent()
                do {
                    let reply = try await port.sendRequest(msgid: SoakChild.requestID, components: [Payload.data(step)],
                                                           sendTimeout: .seconds(1), receiveTimeout: .seconds(5))
                    if reply.components.first.flatMap({ Payload.value($0) }) == step {
                        self.ledger.delivered()
                    } else {
                        self.ledger.lost(1, "cross-process: the reply to async request \(step) was not its echo")
                    }
                } catch {
                    self.failed(link, error)
                }
            }
            done.signal()
        }
    }

    func stop() {
        stopFlag.raise()
        if let requester, !requester.join() { ledger.violation("cross-process: the requester did not stop within 60 s") }
        if asyncDone?.wait(timeout: .now() + 60) == .timedOut { ledger.violation("cross-process: the async requester did not stop within 60 s") }
        let incarnation = killPeer()
        settle(incarnation)
        for entry in retiring { settle(entry.incarnation) }
        retiring.removeAll()
        publication?.unpublish()
    }

    func tearDown() {
        child?.stop()
        owner?.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// The counts a peer prints: `STATS ok=… failed=… bad=… oneway=… gaps=…`.
///
/// Thread-safety: a value type.
struct PeerStats: Equatable {
    var ok = 0, failed = 0, bad = 0, oneway = 0, gaps = 0

    init() {}

    init?(line: String) {
        var values: [String: Int] = [:]
        for field in line.split(separator: " ").dropFirst() {
            let parts = field.split(separator: "=")
            guard parts.count == 2, let value = Int(parts[1]) else { return nil }
            values[String(parts[0])] = value
        }
        guard let ok = values["ok"], let failed = values["failed"], let bad = values["bad"],
              let oneway = values["oneway"], let gaps = values["gaps"] else { return nil }
        (self.ok, self.failed, self.bad, self.oneway, self.gaps) = (ok, failed, bad, oneway, gaps)
    }

    var line: String { "STATS ok=\(ok) failed=\(failed) bad=\(bad) oneway=\(oneway) gaps=\(gaps)" }
}
