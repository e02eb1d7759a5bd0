import CoreMetrics
import PortRunLoopKit

/// The counters a ``LoopMetricsSampler`` reports ``PortRunLoopKit/LoopMetrics`` differences to.
///
/// Thread-safety: immutable metric handles; `Sendable`.
struct SampledLoopCounters: Sendable {
    let wakeSignals: Counter
    let sleeps: Counter
    let workDiscarded: Counter
    let eventAdds: Counter
    let eventDeletes: Counter
    let wakeTimerSets: Counter
    let idleSpins: Counter
    let observerRounds: Counter
    let deliveryLatency: CoreMetrics.Timer

    init(dimensions: [(String, String)], factory: any MetricsFactory) {
        wakeSignals = Counter(label: LoopMetricNames.wakeSignals, dimensions: dimensions, factory: factory)
        sleeps = Counter(label: LoopMetricNames.sleeps, dimensions: dimensions, factory: factory)
        workDiscarded = Counter(label: LoopMetricNames.workDiscarded, dimensions: dimensions, factory: factory)
        eventAdds = Counter(label: LoopMetricNames.eventAdds, dimensions: dimensions, factory: factory)
        eventDeletes = Counter(label: LoopMetricNames.eventDeletes, dimensions: dimensions, factory: factory)
        wakeTimerSets = Counter(label: LoopMetricNames.wakeTimerSets, dimensions: dimensions, factory: factory)
        idleSpins = Counter(label: LoopMetricNames.idleSpins, dimensions: dimensions, factory: factory)
        observerRounds = Counter(label: LoopMetricNames.observerRounds, dimensions: dimensions, factory: factory)
        deliveryLatency = CoreMetrics.Timer(label: LoopMetricNames.deliveryLatency, dimensions: dimensions, factory: factory)
    }

    func report(_ delta: LoopMetrics) {
        add(delta.wakeSignals, to: wakeSignals)
        add(delta.sleeps, to: sleeps)
        add(delta.workDiscarded, to: workDiscarded)
        add(delta.eventAdds, to: eventAdds)
        add(delta.eventDeletes, to: eventDeletes)
        add(delta.wakeTimerSets, to: wakeTimerSets)
        add(delta.idleSpins, to: idleSpins)
        add(delta.observerRounds, to: observerRounds)
    }
}

/// The gauges and counters a ``LoopMetricsSampler`` reports ``PortRunLoopKit/NotificationQueueMetrics`` to.
///
/// Thread-safety: immutable metric handles; `Sendable`.
struct SampledQueueInstruments: Sendable {
    let depth: Gauge
    let highWaterMark: Gauge
    let enqueued: Counter
    let delivered: Counter
    let coalesced: Counter
    let discarded: Counter

    init(dimensions: [(String, String)], factory: any MetricsFactory) {
        depth = Gauge(label: LoopMetricNames.queueDepth, dimensions: dimensions, factory: factory)
        highWaterMark = Gauge(label: LoopMetricNames.queueHighWaterMark, dimensions: dimensions, factory: factory)
        enqueued = Counter(label: LoopMetricNames.queueEnqueued, dimensions: dimensions, factory: factory)
        delivered = Counter(label: LoopMetricNames.queueDelivered, dimensions: dimensions, factory: factory)
        coalesced = Counter(label: LoopMetricNames.queueCoalesced, dimensions: dimensions, factory: factory)
        discarded = Counter(label: LoopMetricNames.queueDiscarded, dimensions: dimensions, factory: factory)
    }

    func report(_ now: NotificationQueueMetrics, since earlier: NotificationQueueMetrics) {
        depth.record(now.depth)
        highWaterMark.record(now.highWaterMark)
        add(now.enqueued - earlier.enqueued, to: enqueued)
        add(now.delivered - earlier.delivered, to: delivered)
        add(now.coalesced - earlier.coalesced, to: coalesced)
        add(now.discarded - earlier.discarded, to: discarded)
    }
}

/// Adds a positive difference to `counter` (a counter only goes up; nothing is reported for 0).
private func add(_ count: Int, to counter: Counter) {
    if count > 0 { counter.increment(by: count) }
}
