import Foundation
import Synchronization
import MetricsTestKit
import PortRunLoopKit
import PortRunLoopMetrics
import Testing
import PortRunLoopTestSupport

/// `LoopMetricsSampler.sample()`: differences to counters, current values to gauges.
@Suite(.timeLimit(.minutes(1))) struct LoopMetricsSamplerTests {
    @Test func loopCountersReportTheDifferencesSinceTheLastSample() throws {
        let metrics = TestMetrics()
        let (name, first, second) = try onFreshThread(name: "sampled-loop") { () -> (String, LoopMetrics, LoopMetrics) in
            let loop = PortRunLoop.current
            let port = MessagePort()
            loop.add(port, forMode: .default)
            defer { port.invalidate() }
            // An observer, so the run makes rounds of observer calls.
            let observer = RunLoopObserver(activities: .allActivities) { _, _ in }
            loop.add(observer, forMode: .default)
            defer { observer.invalidate() }
            let sampler = LoopMetricsSampler(loop: loop, factory: metrics)
            // The loop is not running, so its counters hold still while they are compared.
            sampler.sample()
            let first = loop.metrics
            sampler.sample() // nothing happened: nothing is reported
            // The run has nothing to do: it blocks (a sleep) until the timeout, which arms the
            // wake-up timer (an event add).
            loop.run(mode: .default, timeout: 0.001, returnAfterSourceHandled: false)
            sampler.sample()
            return (loop.name, first, loop.metrics)
        }
        #expect(second.sleeps > first.sleeps)
        #expect(first.observerRounds == 0 && second.observerRounds > 0)
        let dimensions = [("loop", name)]
        func check(_ label: String, _ field: KeyPath<LoopMetrics, Int>) throws {
            let increments = try metrics.expectCounter(label, dimensions).values
            let expected = [first[keyPath: field], second[keyPath: field] - first[keyPath: field]]
            #expect(increments == expected.filter { $0 > 0 }.map(Int64.init), "\(label)")
        }
        try check("portrunloop_wake_signals", \.wakeSignals)
        try check("portrunloop_sleeps", \.sleeps)
        try check("portrunloop_work_discarded", \.workDiscarded)
        try check("portrunloop_event_adds", \.eventAdds)
        try check("portrunloop_event_deletes", \.eventDeletes)
        try check("portrunloop_wake_timer_sets", \.wakeTimerSets)
        try check("portrunloop_idle_spins", \.idleSpins)
        try check("portrunloop_observer_rounds", \.observerRounds)
        // No queue was given: no queue metrics.
        #expect(metrics.recorders.isEmpty)
    }

    @Test func queueGaugesShowTheDepthAndCountersTheDeliveries() throws {
        let metrics = TestMetrics()
        let count = 5
        let poster = try RunLoopThread(name: "poster")
        defer { poster.stop() }
        let center = ThreadNotificationCenter()
        let name = Notification.Name("LoopMetricsSamplerTests.ping")
        let (loopName, queued, drained) = try onFreshThread(name: "sampled-queue") {
            () throws -> (String, NotificationQueueMetrics, NotificationQueueMetrics) in
            let loop = PortRunLoop.current
            let port = MessagePort()
            loop.add(port, forMode: .default)
            defer { port.invalidate() }
            let received = ReceivedCount()
            let observation = center.addObserver(forName: name, on: loop) { _ in
                if received.increment() == count { loop.stop() }
            }
            defer { center.removeObserver(observation) }
            let queue = center.queue(for: loop)
            let sampler = LoopMetricsSampler(loop: loop, notificationQueue: queue, factory: metrics)
            // Posted from another thread, they wait in this loop's queue until it runs.
            try poster.loop.performAndWait { for _ in 0..<count { center.post(name: name) } }
            sampler.sample()
            let queued = queue.metrics
            loop.run()
            sampler.sample()
            return (loop.name, queued, queue.metrics)
        }
        #expect(queued.depth == count)
        #expect(drained.depth == 0)
        let dimensions = [("loop", loopName)]
        #expect(try metrics.expectGauge("portrunloop_notification_queue_depth", dimensions).values
            == [Double(count), 0])
        #expect(try metrics.expectGauge("portrunloop_notification_queue_high_water_mark", dimensions).values
            == [Double(count), Double(count)])
        #expect(try metrics.expectCounter("portrunloop_notification_queue_enqueued", dimensions).values
            == [Int64(count)])
        #expect(try metrics.expectCounter("portrunloop_notification_queue_delivered", dimensions).values
            == [Int64(count)])
        #expect(try metrics.expectCounter("portrunloop_notification_queue_coalesced", dimensions).values.isEmpty)
        #expect(try metrics.expectCounter("portrunloop_notification_queue_discarded", dimensions).values.isEmpty)
    }
}

/// `LoopMetricsSampler.sample()`'s delivery-latency probe.
@Suite(.timeLimit(.minutes(1))) struct LoopMetricsSamplerProbeTests {
    @Test func eachSampleTimesOneBlockThroughTheLoop() throws {
        let metrics = TestMetrics()
        let thread = try RunLoopThread(name: "probed-loop")
        defer { thread.stop() }
        let sampler = LoopMetricsSampler(loop: thread.loop, factory: metrics)
        let sampled = DispatchSemaphore(value: 0)
        // The loop is busy for at least 5 ms after the first probe is queued: that probe waits.
        thread.loop.perform {
            sampled.wait()
            usleep(5_000)
        }
        sampler.sample()
        sampled.signal()
        try thread.loop.performAndWait {}
        sampler.sample()
        try thread.loop.performAndWait {} // both probes ran: they are queued ahead of this call
        let values = try metrics.expectTimer("portrunloop_delivery_latency", [("loop", "probed-loop")]).values
        #expect(values.count == 2)
        #expect((values.first ?? 0) >= 5_000_000)
        #expect(values.allSatisfy { $0 >= 0 })
    }
}

/// A count shared with an observer's handler.
final class ReceivedCount: Sendable {
    private let value = Atomic<Int>(0)
    /// Adds one and returns the new count.
    func increment() -> Int { value.add(1, ordering: .relaxed).newValue }
}
