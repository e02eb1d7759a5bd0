import Foundation
import PortRunLoopKit
import Synchronization

/// What one notification carries across the process boundary: the posting thread's index, its
/// sequence number there, and `CLOCK_MONOTONIC` when it was posted (one clock for every process of
/// the host, so the latency is measured end to end).
private struct CrossProcessItem {
    static let size = 24
    var poster: UInt64, seq: UInt64, postedAt: UInt64

    var data: Data {
        var bytes = Data(capacity: Self.size)
        for value in [poster, seq, postedAt] { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        return bytes
    }

    init(poster: UInt64, seq: UInt64, postedAt: UInt64) { (self.poster, self.seq, self.postedAt) = (poster, seq, postedAt) }

    init?(_ data: Data) {
        guard data.count == Self.size else { return nil }
        func field(_ index: Int) -> UInt64 {
            data.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)) }
        }
        self.init(poster: field(0), seq: field(1), postedAt: field(2))
    }
}

/// msgids of the cross-process scenario.
private enum CrossProcessMessage {
    static let notification: UInt32 = 1
    static let request: UInt32 = 2
}

/// Apple's redirector with the poster in another process: this process publishes a port
/// scheduled on a chosen, named thread; a second process of this program (started here) posts
/// notifications on `Foundation.NotificationCenter` from several threads, and its observer
/// forwards each, on the posting thread, to that port by name; every one is handled on the chosen
/// thread here. Then the second process makes request/reply round trips to the same port. The
/// queue limit holds end to end: a full port makes the other process's sends wait (credits), so
/// nothing is dropped and nothing piles up. Returns false if any check fails.
func runCrossProcessScenario(_ options: DemoOptions) throws -> Bool {
    let total = options.threads * options.items
    let requests = 1_000
    let name = "portrunloop-demo-\(getpid())"
    let chosen = try RunLoopThread(name: "observer-thread")
    defer { chosen.stop() }

    // What the handler saw, written only on the chosen thread.
    final class Seen: DeliveryEvidence, @unchecked Sendable {
        var malformed = 0
        var requestsAnswered = 0
    }
    let seen = Seen(posters: options.threads, total: total)
    let allHandled = DispatchSemaphore(value: 0)

    let port = MessagePort(queueLimit: 64)
    port.setHandler { message in
        seen.checkThread(onChosenThread: chosen.loop.isCurrentThread)
        switch message.msgid {
        case CrossProcessMessage.notification:
            guard let item = message.components.first.flatMap(CrossProcessItem.init), seen.knows(poster: Int(item.poster)) else {
                seen.malformed += 1
                return
            }
            if seen.record(poster: Int(item.poster), seq: item.seq, postedAt: item.postedAt, handledAt: monotonicNanoseconds()) {
                allHandled.signal()
            }
        case CrossProcessMessage.request:
            // The answer says which thread handled the request.
            if message.reply(msgid: CrossProcessMessage.request, components: [Data((Thread.current.name ?? "?").utf8)],
                             before: Date(timeIntervalSinceNow: 5)) {
                seen.requestsAnswered += 1
            }
        default:
            seen.malformed += 1
        }
    }
    chosen.loop.add(port, forMode: .common)
    let published = try MessagePortNameRegistry.default.publish(port, as: name, on: chosen.loop)
    defer { published.unpublish() }

    print("""
    == Scenario 3: the redirector across processes (a port published by name, the poster in another process) ==
      published '\(name)' at \(published.socketPath); handled on '\(chosen.name)' (pid \(getpid())); \
    queue limit \(port.queueLimit), end to end
    """)
    let start = Date()
    let child = Process()
    child.executableURL = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
    child.arguments = ["--cross-process-poster", name, "\(options.threads)", "\(options.items)", "\(requests)"]
    let output = Pipe()
    child.standardOutput = output
    try child.run()
    let report = output.fileHandleForReading.readDataToEndOfFile() // until the poster exits
    child.waitUntilExit()
    let finished = allHandled.wait(timeout: .now() + 60) == .success
    let elapsed = Date().timeIntervalSince(start)
    let (count, outOfOrder, wrongThread, malformed, answered, latencies) = try chosen.loop.performAndWait {
        (seen.count, seen.outOfOrder, seen.wrongThread, seen.malformed, seen.requestsAnswered, seen.latencies)
    }
    let summary = LatencySummary(latencies)
    let statistics = published.statistics

    print("  poster process (pid \(child.processIdentifier)), its own account:")
    for line in String(decoding: report, as: UTF8.self).split(separator: "\n") { print("    \(line)") }
    print("  posted:            \(total) by \(options.threads) threads of the other process")
    print("  handled:           \(count)\(finished ? "" : "  (TIMED OUT after 60 s)") on '\(chosen.name)' (wrong thread: \(wrongThread))")
    print("  in order per poster: \(outOfOrder == 0 ? "yes" : "NO (\(outOfOrder) out of order)")")
    print("  requests answered: \(answered) of \(requests), each on '\(chosen.name)'")
    print("  connections:       \(statistics.connectionsAccepted) accepted, \(statistics.connectionsRefused) refused, "
        + "\(statistics.framesRejected) frames rejected, \(malformed) malformed messages")
    print("  latency post→handled (across processes): p50 \(LatencySummary.format(summary.percentile(50))), "
        + "p99 \(LatencySummary.format(summary.percentile(99))), max \(LatencySummary.format(summary.percentile(100)))")
    print(String(format: "  wall time: %.3f s (%.0f notifications/s, process start included)", elapsed, Double(total) / max(elapsed, 1e-9)))

    let ok = finished && child.terminationStatus == 0 && count == total && outOfOrder == 0 && wrongThread == 0
        && malformed == 0 && answered == requests && statistics.framesRejected == 0
    print("  result: \(ok ? "OK — every notification from the other process was handled exactly once, in order, on '\(chosen.name)'" : "FAILED")")
    return ok
}

/// The second process of scenario 3 (`portrunloop-demo --cross-process-poster NAME THREADS ITEMS
/// REQUESTS`): looks the port up, forwards every notification its threads post to it, makes the
/// request round trips, prints its account and exits 0 if every send and request succeeded.
func runCrossProcessPoster(_ arguments: [String]) -> Never {
    guard arguments.count == 4, let threads = Int(arguments[1]), let items = Int(arguments[2]),
          let requests = Int(arguments[3]) else {
        FileHandle.standardError.write(Data("portrunloop-demo: --cross-process-poster NAME THREADS ITEMS REQUESTS\n".utf8))
        exit(2)
    }
    let remote: MessagePort
    do {
        remote = try MessagePortNameRegistry.default.remotePort(named: arguments[0])
    } catch {
        FileHandle.standardError.write(Data("portrunloop-demo (poster process): \(error)\n".utf8))
        exit(1)
    }
    let failedSends = Atomic<Int>(0)
    // The redirector's capture, on each posting thread: forward the notification; with the port
    // full, the send waits for a credit (the queue limit holds across the processes).
    let token = NotificationCenter.default.addObserver(forName: .demoItem, object: nil, queue: nil) { note in
        let info = note.userInfo!
        let item = CrossProcessItem(poster: UInt64(info["poster"] as! Int), seq: UInt64(info["seq"] as! Int),
                                    postedAt: info["at"] as! UInt64)
        if !remote.send(before: Date(timeIntervalSinceNow: 30), msgid: CrossProcessMessage.notification, components: [item.data]) {
            failedSends.add(1, ordering: .relaxed)
        }
    }
    postDemoItems(threads: threads, items: items)
    NotificationCenter.default.removeObserver(token)

    var roundTrips: [UInt64] = []
    var handlers = Set<String>()
    var requestErrors: [String] = []
    for index in 0..<requests {
        let started = monotonicNanoseconds()
        do {
            let reply = try remote.sendRequest(msgid: CrossProcessMessage.request, components: [Data("\(index)".utf8)],
                                               sendTimeout: .seconds(5), receiveTimeout: .seconds(5))
            roundTrips.append(monotonicNanoseconds() - started)
            handlers.insert(String(decoding: reply.components.first ?? Data(), as: UTF8.self))
        } catch {
            requestErrors.append("\(error)")
        }
    }
    let summary = LatencySummary(roundTrips)
    let failed = failedSends.load(ordering: .relaxed)
    print("sent \(threads * items - failed) notifications from \(threads) threads, \(failed) sends failed")
    print("request/reply: \(roundTrips.count) of \(requests) answered, by \(handlers.sorted().map { "'\($0)'" }.joined(separator: ", ")); "
        + "round trip p50 \(LatencySummary.format(summary.percentile(50))), p99 \(LatencySummary.format(summary.percentile(99)))"
        + (requestErrors.isEmpty ? "" : "; errors: \(Set(requestErrors).sorted().joined(separator: ", "))"))
    exit(failed == 0 && requestErrors.isEmpty ? 0 : 1)
}
