import Foundation
import PortRunLoopKit
import Synchronization
import Testing

/// Operator metrics of each thread's notification queue.
@Suite(.timeLimit(.minutes(2)))
struct NotificationMetricsTests {
    @Test func depthHighWaterMarkAndDelivered() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "nm-depth")
        defer { a.stop() }
        let got = NotifCountdown()
        let t1 = center.addObserver(forName: .notifTestA, on: a.loop) { _ in got.add() }
        let t2 = center.addObserver(forName: nil, on: a.loop) { _ in got.add() }
        let queue = center.queue(for: a.loop)
        #expect(queue.metrics == NotificationQueueMetrics(depth: 0, highWaterMark: 0, enqueued: 0, delivered: 0,
                                                          coalesced: 0, discarded: 0, drainsScheduled: 0))
        let release = holdLoop(a)
        for _ in 0..<25 { center.post(name: .notifTestA) } // two observers each: 50 deliveries
        var m = queue.metrics
        #expect(m.depth == 50)
        #expect(m.highWaterMark == 50)
        #expect(m.enqueued == 50)
        release.fire()
        #expect(got.wait(for: 50))
        try a.loop.performAndWait { }
        m = queue.metrics
        #expect(m.depth == 0)
        #expect(m.highWaterMark == 50)
        #expect(m.delivered == 50)
        #expect(m.enqueued == m.depth + m.delivered + m.coalesced + m.discarded)
        withExtendedLifetime((t1, t2)) { }
    }

    @Test func discardedAndCoalescedAreCounted() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "nm-discard")
        defer { a.stop() }
        let token = center.addObserver(forName: .notifTestA, on: a.loop) { _ in }
        let queue = center.queue(for: a.loop)
        let release = holdLoop(a)
        for _ in 0..<10 { center.post(name: .notifTestA) }
        token.remove()
        release.fire()
        try a.loop.performAndWait {
            for _ in 0..<3 { queue.enqueue(Notification(name: .notifTestB), postingStyle: .asap) } // 2 coalesced
        }
        try a.loop.performAndWait { }
        let m = queue.metrics
        #expect(m.discarded == 10)
        #expect(m.coalesced == 2)
        #expect(m.delivered == 1) // the one .asap post
        #expect(m.depth == 0)
        #expect(m.enqueued == m.depth + m.delivered + m.coalesced + m.discarded)
    }

    /// A post that reaches a queue whose loop already shut down is still counted: enqueued, and
    /// discarded at once.
    @Test func postsToAQueueWhoseLoopShutDownAreCountedAsDiscarded() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "nm-dead")
        let queue = center.queue(for: a.loop)
        // Observed in a mode the loop never runs: the first post's drain waits there until the
        // shutdown discards it, which ends the queue's lane.
        let token = center.addObserver(forName: .notifTestA, on: a.loop, inModes: [RunLoop.Mode("nm.never-run")]) { _ in }
        center.post(name: .notifTestA)
        a.stop()
        center.post(name: .notifTestA) // finds the lane dead
        let m = queue.metrics
        #expect(m.enqueued == 2)
        #expect(m.discarded == 2)
        #expect(m.depth == 0)
        #expect(m.enqueued == m.depth + m.delivered + m.coalesced + m.discarded)
        withExtendedLifetime(token) {}
    }

    /// Metrics are read from another thread while deliveries run; reading never stops delivery and
    /// the counts only grow.
    @Test func readableFromAnyThreadDuringDelivery() throws {
        let center = ThreadNotificationCenter()
        let a = try RunLoopThread(name: "nm-live")
        defer { a.stop() }
        let total = 20_000
        let got = NotifCountdown()
        let token = center.addObserver(forName: .notifTestA, on: a.loop) { _ in got.add() }
        let queue = center.queue(for: a.loop)
        let stop = NotifBox(false)
        let problems = NotifCountdown()
        let reads = NotifCountdown()
        let reader = notifSpawn("nm-reader") {
            var last = queue.metrics
            while !stop.value {
                let m = queue.metrics
                if m.delivered < last.delivered || m.enqueued < last.enqueued || m.highWaterMark < last.highWaterMark {
                    problems.add()
                }
                if m.depth < 0 { problems.add() }
                last = m
                reads.add()
            }
        }
        for _ in 0..<total { center.post(name: .notifTestA) }
        #expect(got.wait(for: total, seconds: 90))
        stop.value = true
        #expect(reader.wait())
        #expect(problems.value == 0)
        // The last handler has run, but its delivery is counted after it returns: a call queued
        // behind the drain makes the queue quiet before the final counts are read.
        try a.loop.performAndWait { }
        let m = queue.metrics
        #expect(m.delivered == total)
        #expect(m.depth == 0)
        #expect(m.highWaterMark >= 1)
        print("metrics under load: \(m); \(reads.value) concurrent reads; loop \(a.loop.metrics)")
        withExtendedLifetime(token) { }
    }

    @Test func describesItself() {
        let m = NotificationQueueMetrics(depth: 1, highWaterMark: 2, enqueued: 3, delivered: 1, coalesced: 0,
                                         discarded: 1, drainsScheduled: 1)
        #expect(m.description == "depth 1 (high-water 2), enqueued 3, delivered 1, coalesced 0, discarded 1, drains 1")
    }
}
