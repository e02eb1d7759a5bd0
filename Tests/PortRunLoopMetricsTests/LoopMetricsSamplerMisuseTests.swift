import MetricsTestKit
import PortRunLoopKit
import PortRunLoopMetrics
import PortRunLoopTestSupport
import Testing

/// A sampler's documented misuse stops the process with the library's message, in release builds
/// as in debug ones.
@Suite(.timeLimit(.minutes(1))) struct LoopMetricsSamplerMisuseTests {
    @Test func aSamplingIntervalThatIsNotPositiveIsNamed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = try RunLoopThread(name: "sampled")
            LoopMetricsSampler(loop: thread.loop, factory: TestMetrics()).schedule(every: 0)
        }
        expectMisuse(result, "LoopMetricsSampler.schedule(every:on:forMode:): the interval must be positive, got 0.0",
                     at: "PortRunLoopMetrics/LoopMetricsSampler.swift")
    }

    @Test func aQueueOfAnotherLoopIsNamed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let sampled = try RunLoopThread(name: "sampled")
            let other = try RunLoopThread(name: "other")
            _ = LoopMetricsSampler(loop: sampled.loop, notificationQueue: ThreadNotificationCenter.default.queue(for: other.loop),
                                   factory: TestMetrics())
        }
        expectMisuse(result, "LoopMetricsSampler: the notification queue belongs to another loop",
                     at: "PortRunLoopMetrics/LoopMetricsSampler.swift")
    }
}
