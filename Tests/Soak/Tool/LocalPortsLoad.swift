import Foundation
import PortRunLoopKit
import Synchronization

/// Local ports, `perform` and `performAndWait` between threads.
///
/// - Two sender threads (no loop) send to every hub's inbox port: waiting sends (up to 5 s; the
///   documentation promises delivery of every accepted message, in order: M5) and zero-timeout
///   sends (refused when the queue is full: an allowed drop, `port-full`), `perform` blocks (P2:
///   in order, each once) and `performAndWait` calls (W1: the body's value comes back).
/// - Each hub's 5 ms repeating timer sends a zero-timeout request to the next hub's inbox with its
///   reply port as `from:`; the next hub answers on that reply port (zero timeout: refused replies
///   are `reply-port-full` drops), and every tenth tick calls the next hub synchronously
///   (`performAndWait` from loop to loop, W4).
///
/// Thread-safety: `@unchecked Sendable`: the ``SoakLoad`` members run on the main thread; the
/// load's threads, started at the end of ``start()``, read only what it set before.
final class LocalPortsLoad: SoakLoad, @unchecked Sendable {
    let name = "ports"
    private let hubs: SoakHubs
    private let ledger: SoakLedger
    private let stopFlag = StopFlag()
    private let rate: Double
    private let senderCount = 2
    private var inboxes: [MessagePort] = []
    private var replyPorts: [MessagePort] = []
    /// Per hub: the inbox's streams, by msgid: sender i's waiting sends (2i), zero-timeout sends
    /// (2i+1), then the previous hub's requests.
    private var inboxChecks: [[SequenceCheck]] = []
    /// Per hub: the replies the next hub sent it.
    private var replyChecks: [SequenceCheck] = []
    /// Per sender, per hub: `perform` blocks.
    private var performChecks: [[SequenceCheck]] = []
    private var hubTimers: [RunLoopTimer] = []
    private var senders: [PacedThread] = []

    init(hubs: SoakHubs, ledger: SoakLedger, rate: Double) {
        self.hubs = hubs
        self.ledger = ledger
        self.rate = rate
    }

    func start() throws {
        let ledger = self.ledger
        for hub in 0..<hubs.count {
            let inbox = MessagePort(queueLimit: 8)
            let replies = MessagePort(queueLimit: 16)
            var checks = (0..<senderCount).flatMap { sender in
                [SequenceCheck("ports: sender \(sender) → hub \(hub), waiting sends", ledger: ledger),
                 SequenceCheck("ports: sender \(sender) → hub \(hub), zero-timeout sends", ledger: ledger)]
            }
            checks.append(SequenceCheck("ports: hub \((hub + hubs.count - 1) % hubs.count) → hub \(hub), requests", ledger: ledger))
            inboxChecks.append(checks)
            replyChecks.append(SequenceCheck("ports: hub \((hub + 1) % hubs.count) → hub \(hub), replies", ledger: ledger))
            inboxes.append(inbox)
            replyPorts.append(replies)
        }
        performChecks = (0..<senderCount).map { sender in
            (0..<hubs.count).map { SequenceCheck("perform: sender \(sender) → hub \($0)", ledger: ledger) }
        }
        for hub in 0..<hubs.count {
            let loop = hubs[hub]
            let checks = inboxChecks[hub]
            let requestStream = checks.count - 1
            let previous = (hub + hubs.count - 1) % hubs.count
            let answerCheck = replyChecks[previous]
            inboxes[hub].setHandler { message in
                guard loop.isCurrentThread else { return ledger.violation("ports: hub \(hub)'s inbox handler ran off its thread") }
                guard Int(message.msgid) < checks.count, let sequence = message.components.first.flatMap({ Payload.value($0) }) else {
                    return ledger.violation("ports: hub \(hub) got a malformed message (msgid \(message.msgid))")
                }
                checks[Int(message.msgid)].received(sequence)
                guard Int(message.msgid) == requestStream else { return }
                guard let replyPort = message.replyPort else { return ledger.violation("ports: a request to hub \(hub) came without its reply port") }
                let answer = answerCheck.next
                if replyPort.send(before: Date(), msgid: 0, components: [Payload.data(sequence, answer)]) {
                    answerCheck.accepted()
                } else {
                    ledger.dropped("reply-port-full")
                }
            }
            let replyCheck = replyChecks[hub]
            let lastRequest = Shared<UInt64?>(nil)
            replyPorts[hub].setHandler { message in
                guard let data = message.components.first, let request = Payload.value(data), let answer = Payload.value(data, at: 1) else {
                    return ledger.violation("ports: hub \(hub) got a malformed reply")
                }
                replyCheck.received(answer)
                let earlier = lastRequest.withLock { last in defer { last = request }; return last }
                if let earlier, request <= earlier { ledger.violation("ports: hub \(hub)'s reply for request \(request) came after the one for \(earlier)") }
            }
            loop.add(inboxes[hub], forMode: .common)
            loop.add(replyPorts[hub], forMode: .common)
        }
        for hub in 0..<hubs.count { startHubTimer(hub) }
        for sender in 0..<senderCount {
            senders.append(PacedThread("soak-port-sender-\(sender)", perSecond: 1200 * rate, stop: stopFlag) { [self] step in
                senderStep(sender, step)
            })
        }
    }

    private func startHubTimer(_ hub: Int) {
        let next = (hub + 1) % hubs.count
        let target = inboxes[next]
        let requestCheck = inboxChecks[next][inboxChecks[next].count - 1]
        let replies = replyPorts[hub]
        let nextLoop = hubs[next]
        let ledger = self.ledger
        let requestID = UInt32(2 * senderCount)
        let ticks = Shared(0)
        let timer = RunLoopTimer(fireAt: Date(), interval: 0.005, repeats: true) { _ in
            let sequence = requestCheck.next
            if target.send(before: Date(), msgid: requestID, components: [Payload.data(sequence)], from: replies) {
                requestCheck.accepted()
            } else {
                ledger.dropped("port-full")
            }
            let tick = ticks.withLock { $0 += 1; return $0 }
            guard tick % 10 == 0 else { return }
            ledger.sent()
            do {
                let value = try nextLoop.performAndWait { UInt64(tick) &* 7 }
                if value == UInt64(tick) &* 7 { ledger.delivered() } else { ledger.lost(1, "performAndWait hub \(hub) → hub \(next) returned \(value)") }
            } catch {
                ledger.lost(1, "performAndWait hub \(hub) → hub \(next) threw \(error)")
            }
        }
        hubTimers.append(timer)
        hubs[hub].add(timer, forMode: .common)
    }

    /// One operation of sender `sender` (on its own thread), chosen by `step`.
    private func senderStep(_ sender: Int, _ step: Int) {
        let hub = step % hubs.count
        switch (step / hubs.count) % 4 {
        case 0, 1:
            let waiting = (step / hubs.count) % 4 == 0
            let check = inboxChecks[hub][2 * sender + (waiting ? 0 : 1)]
            let sequence = check.next
            let date = waiting ? Date(timeIntervalSinceNow: 5) : Date()
            if inboxes[hub].send(before: date, msgid: UInt32(2 * sender + (waiting ? 0 : 1)), components: [Payload.data(sequence)]) {
                check.accepted()
            } else {
                ledger.dropped(waiting ? "send-timed-out" : "port-full")
            }
        case 2:
            let check = performChecks[sender][hub]
            let sequence = check.next
            let loop = hubs[hub]
            let ledger = self.ledger
            if loop.perform({
                if !loop.isCurrentThread { ledger.violation("perform: a block for hub \(hub) ran off its thread") }
                check.received(sequence)
            }) {
                check.accepted()
            } else {
                ledger.violation("perform: hub \(hub)'s loop refused a block (it is alive)")
            }
        default:
            ledger.sent()
            do {
                let value = try hubs[hub].performAndWait(timeout: .seconds(10)) { UInt64(step) &* 3 }
                if value == UInt64(step) &* 3 { ledger.delivered() } else { ledger.lost(1, "performAndWait to hub \(hub) returned \(value)") }
            } catch PortRunLoopError.timedOut {
                ledger.dropped("performAndWait-timed-out")
            } catch {
                ledger.lost(1, "performAndWait to hub \(hub) threw \(error)")
            }
        }
    }

    func stop() {
        stopFlag.raise()
        for sender in senders where !sender.join() { ledger.violation("ports: \(sender.name) did not stop within 60 s") }
        for timer in hubTimers { timer.invalidate() }
        let all = inboxChecks.flatMap { $0 } + replyChecks + performChecks.flatMap { $0 }
        if !waitUntil(seconds: 10, { all.allSatisfy { $0.outstanding == 0 } }) {
            ledger.note("ports: messages still outstanding 10 s after the senders stopped")
        }
        for check in all { check.finish() }
        for port in inboxes + replyPorts { port.invalidate() }
    }
}
