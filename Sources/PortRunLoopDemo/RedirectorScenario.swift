import Foundation
import PortRunLoopKit
import Synchronization

extension Notification.Name {
    /// What the background threads post in the demo (the article's "NotificationName").
    static let demoItem = Notification.Name("PortRunLoopDemo.item")
}

/// Apple's redirector end to end: an observer on a chosen, named thread; notifications posted on
/// `Foundation.NotificationCenter` from several background threads; each captured on its posting
/// thread and redirected through a zero-timeout port doorbell; every one handled on the chosen
/// thread. Returns false if any check fails.
func runRedirectorScenario(_ options: DemoOptions) throws -> Bool {
    let total = options.threads * options.items
    let chosen = try RunLoopThread(name: "observer-thread")
    defer { chosen.stop() }

    // What the observer saw, written only on the chosen thread.
    let seen = DeliveryEvidence(posters: options.threads, total: total)
    let allHandled = DispatchSemaphore(value: 0)

    let observer = ThreadedObserver(queueLimit: options.queueLimit) { note in
        let now = monotonicNanoseconds()
        let info = note.userInfo!
        let poster = info["poster"] as! Int, seq = info["seq"] as! Int, postedAt = info["at"] as! UInt64
        seen.checkThread(onChosenThread: chosen.loop.isCurrentThread)
        if seen.record(poster: poster, seq: UInt64(seq), postedAt: postedAt, handledAt: now) {
            allHandled.signal()
        }
    }
    // setUpThreadingSupport runs on the chosen thread, as the article requires.
    try chosen.loop.performAndWait { observer.setUpThreadingSupport() }

    // "Register for the notification normally": Foundation's center calls us on the posting thread.
    let token = NotificationCenter.default.addObserver(forName: .demoItem, object: nil, queue: nil) { note in
        observer.processNotification(note)
    }
    defer { NotificationCenter.default.removeObserver(token) }

    print("""
    == Scenario 1: Apple's redirector ("Delivering Notifications To Particular Threads") ==
      chosen thread: '\(chosen.name)'; posters: \(options.threads) threads × \(options.items) notifications; \
    port queue limit \(options.queueLimit); zero-timeout sends
    """)
    let start = Date()
    postDemoItems(threads: options.threads, items: options.items)
    let finished = allHandled.wait(timeout: .now() + 60) == .success
    let elapsed = Date().timeIntervalSince(start)
    let (count, outOfOrder, wrongThread, latencies) = try chosen.loop.performAndWait {
        (seen.count, seen.outOfOrder, seen.wrongThread, seen.latencies)
    }
    let stats = observer.stats
    let batches = stats.batches
    let threadsSeen = Set(batches.map(\.thread))
    let summary = LatencySummary(latencies)

    print("  posted:            \(total)")
    print("  handled:           \(count)\(finished ? "" : "  (TIMED OUT after 60 s)")")
    print("  doorbells sent:    \(stats.doorbellsSent) (accepted by the port)")
    print("  doorbells dropped: \(stats.doorbellsDropped) (port full: the send returned false; the item stayed in the array)")
    print("  batches:           \(batches.count) drains that found items, \(stats.emptyWakeups) that found the array already empty")
    let shown = options.verbose ? Array(batches.enumerated()) : Array(batches.enumerated().prefix(8)) + Array(batches.enumerated().suffix(batches.count > 12 ? 4 : 0))
    var lastIndex = -1
    for (index, batch) in shown {
        if index != lastIndex + 1 { print("    … \(index - lastIndex - 1) more batches …") }
        print("    batch \(String(index + 1).padding(toLength: 5, withPad: " ", startingAt: 0)) \(String(batch.items).padding(toLength: 6, withPad: " ", startingAt: 0)) items on '\(batch.thread)'")
        lastIndex = index
    }
    print("  handling threads:  \(threadsSeen.sorted().map { "'\($0)'" }.joined(separator: ", ")) (every batch)")
    print("  in order per poster: \(outOfOrder == 0 ? "yes" : "NO (\(outOfOrder) out of order)")")
    print("  latency post→handled: p50 \(LatencySummary.format(summary.percentile(50))), p99 \(LatencySummary.format(summary.percentile(99))), max \(LatencySummary.format(summary.percentile(100)))")
    print(String(format: "  wall time: %.3f s (%.0f notifications/s)", elapsed, Double(total) / max(elapsed, 1e-9)))

    let ok = finished && count == total && outOfOrder == 0 && wrongThread == 0 && threadsSeen == [chosen.name]
    print("  result: \(ok ? "OK — every notification was handled exactly once, in order, on '\(chosen.name)'" : "FAILED")")
    return ok
}
