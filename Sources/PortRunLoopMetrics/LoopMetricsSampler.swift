import CoreMetrics
import Foundation
import PortRunLoopKit

/// Reports a loop's cumulative counters (`PortRunLoop.metrics`) and, optionally,
/// its notification queue's (`ThreadNotificationQueue.metrics`) to swift-metrics,
/// by sampling: each ``sample()`` reads a snapshot and adds the *differences* since the previous
/// sample to counters, and sets gauges to the current values. The first sample reports everything
/// counted since the loop (or queue) was made, so a counter's total matches the snapshot.
///
/// Each sample also probes the loop's delivery latency (``LoopMetricNames/deliveryLatency``): it
/// queues one block (`perform`) stamped with the time, and the block records how long it waited
/// when the loop runs it. The probe is one block per sample, counted among the loop's
/// `LoopMetrics.performsRun`; no message of the application is timed.
///
/// Loop counters: ``LoopMetricNames/wakeSignals``, ``LoopMetricNames/sleeps``,
/// ``LoopMetricNames/workDiscarded``, ``LoopMetricNames/eventAdds``, ``LoopMetricNames/eventDeletes``,
/// ``LoopMetricNames/wakeTimerSets``, ``LoopMetricNames/idleSpins``, ``LoopMetricNames/observerRounds``.
/// Queue gauges: ``LoopMetricNames/queueDepth``, ``LoopMetricNames/queueHighWaterMark``; queue
/// counters: ``LoopMetricNames/queueEnqueued``, ``LoopMetricNames/queueDelivered``,
/// ``LoopMetricNames/queueCoalesced``, ``LoopMetricNames/queueDiscarded``. All carry
/// `("loop", name)`. (The per-turn counts are ``LoopTurnReporter``'s.)
///
/// Sampling reads a handful of relaxed atomics and never touches the loop's or the queue's hot
/// path. Drive it yourself (call ``sample()`` from your scrape handler), or let a loop drive it with
/// ``schedule(every:on:forMode:)``. Use one sampler per loop and backend: two samplers of the same
/// loop report every difference twice.
///
/// Thread-safety: `Sendable`; ``sample()`` may be called from any thread (calls are serialised by a
/// lock).
public final class LoopMetricsSampler: Sendable {
    /// The loop sampled.
    ///
    /// Thread-safety: immutable.
    public let loop: PortRunLoop
    /// The notification queue sampled, if any.
    ///
    /// Thread-safety: immutable.
    public let notificationQueue: ThreadNotificationQueue?

    private let loopCounters: SampledLoopCounters
    private let queueInstruments: SampledQueueInstruments?
    /// What the previous sample read; the lock also serialises samples.
    private let last = TracedMutex((loop: LoopMetrics(), queue: NotificationQueueMetrics()))

    /// A sampler of `loop` and, when given, `notificationQueue` (which must be `loop`'s: for
    /// instance `ThreadNotificationCenter.default.queue(for: loop)`), whose metrics carry
    /// `("loop", loop.name)` followed by `dimensions`, made by `factory`. It reports nothing until
    /// the first ``sample()``.
    ///
    /// Thread-safety: any thread.
    public init(loop: PortRunLoop, notificationQueue: ThreadNotificationQueue? = nil,
                dimensions: [(String, String)] = [], factory: any MetricsFactory = MetricsSystem.factory) {
        Misuse.check(notificationQueue.map { $0.loop === loop } ?? true,
                     "LoopMetricsSampler: the notification queue belongs to another loop")
        let base = [(LoopMetricNames.loopKey, loop.name)] + dimensions
        self.loop = loop
        self.notificationQueue = notificationQueue
        loopCounters = SampledLoopCounters(dimensions: base, factory: factory)
        queueInstruments = notificationQueue.map { _ in SampledQueueInstruments(dimensions: base, factory: factory) }
    }

    /// Reads the loop's (and queue's) counters and reports what changed since the previous sample:
    /// differences to the counters, current depth and high-water mark to the gauges; and queues
    /// the delivery-latency probe.
    ///
    /// Thread-safety: any thread; concurrent calls are serialised.
    public func sample() {
        let latency = loopCounters.deliveryLatency
        let queued = ContinuousClock.now
        loop.perform {
            let (seconds, attoseconds) = queued.duration(to: .now).components
            latency.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        }
        last.withLock { last in
            let now = loop.metrics
            loopCounters.report(now.since(last.loop))
            last.loop = now
            if let notificationQueue, let queueInstruments {
                let queueNow = notificationQueue.metrics
                queueInstruments.report(queueNow, since: last.queue)
                last.queue = queueNow
            }
        }
    }

    /// Samples every `seconds` from a repeating `RunLoopTimer` on `driver` (default:
    /// the sampled loop itself: no extra thread, and one timer fire per interval on that loop).
    /// The timer holds the sampler; invalidate the returned timer to stop sampling.
    ///
    /// - Parameters:
    ///   - seconds: the sampling interval (must be positive and finite).
    ///   - driver: the loop whose thread samples (default: ``loop``).
    ///   - mode: the mode the timer is added in (default: the common modes).
    /// - Returns: the timer, already added to `driver`.
    ///
    /// Thread-safety: any thread.
    @discardableResult
    public func schedule(every seconds: TimeInterval, on driver: PortRunLoop? = nil,
                         forMode mode: RunLoop.Mode = .common) -> RunLoopTimer {
        Misuse.check(seconds > 0 && seconds.isFinite,
                     "LoopMetricsSampler.schedule(every:on:forMode:): the interval must be positive, got \(seconds)")
        let timer = RunLoopTimer(after: seconds, repeats: true) { [self] _ in sample() }
        (driver ?? loop).add(timer, forMode: mode)
        return timer
    }
}

