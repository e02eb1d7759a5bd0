import Foundation
import MetricsTestKit
import PortRunLoopKit
import PortRunLoopMetrics
import Testing
import PortRunLoopTestSupport

/// `LoopMetricsSampler.schedule(every:on:forMode:)`: a repeating timer on a loop drives the samples.
@Suite(.timeLimit(.minutes(1))) struct LoopMetricsSamplerScheduleTests {
    @Test func aTimerOnTheSampledLoopSamplesItUntilInvalidated() throws {
        let metrics = TestMetrics()
        let name = try onFreshThread(name: "scheduled-loop") { () -> String in
            let loop = PortRunLoop.current
            let center = ThreadNotificationCenter()
            let sampler = LoopMetricsSampler(loop: loop, notificationQueue: center.queue(for: loop), factory: metrics)
            let depth: @Sendable () -> [Double] = { (try? metrics.expectGauge("portrunloop_notification_queue_depth", [("loop", loop.name)]))?.values ?? [] }
            let timer = sampler.schedule(every: 0.001)
            #expect(timer.repeats && timer.interval == 0.001 && timer.isValid)
            // The run ends once the sampler's timer has sampled three times.
            let watcher = RunLoopTimer(after: 0.001, repeats: true) { watcher in
                if depth().count >= 3 { watcher.invalidate(); loop.stop() }
            }
            loop.add(watcher, forMode: .default)
            loop.run()
            timer.invalidate()
            #expect(!timer.isValid)
            return loop.name
        }
        let samples = try metrics.expectGauge("portrunloop_notification_queue_depth", [("loop", name)]).values
        #expect(samples.count >= 3)
        #expect(samples.allSatisfy { $0 == 0 })
        // Each sample also set the high-water gauge.
        let highWater = try metrics.expectGauge("portrunloop_notification_queue_high_water_mark", [("loop", name)])
        #expect(highWater.values.count == samples.count)
    }
}
