import Benchmark

/// The custom metrics every scenario reports (all raw per sample: no scaling factor applied, so
/// Scripts/plot-benchmarks.py and the threshold checker can normalise them exactly).
///
/// Thread-safety: constants.
public enum BenchMetrics {
    /// Context switches of the whole process during the sample (getrusage; see ``ProcessCounters``).
    ///
    /// Thread-safety: a constant.
    public static let contextSwitches = BenchmarkMetric.custom("contextSwitches", polarity: .prefersSmaller, useScalingFactor: false)
    /// Times a producer had to wake the consumer during the sample (peers that can count them).
    ///
    /// Thread-safety: a constant.
    public static let wakeSignals = BenchmarkMetric.custom("wakeSignals", polarity: .prefersSmaller, useScalingFactor: false)
    /// Operations in the sample: messages (throughput), round trips, 1 (first send after idle), or
    /// events, timers, messages or requests (the server-shaped scenarios).
    ///
    /// Thread-safety: a constant.
    public static let operations = BenchmarkMetric.custom("operations", polarity: .prefersLarger, useScalingFactor: false)
    /// `event_add` + `event_del` calls a loop made during the sample (``PortRunLoop/metrics``).
    public static let eventRegistrations = BenchmarkMetric.custom("eventRegistrations", polarity: .prefersSmaller, useScalingFactor: false)
    /// Rounds of observer calls a loop made during the sample (`LoopMetrics.observerRounds`).
    ///
    /// Thread-safety: a constant.
    public static let observerRounds = BenchmarkMetric.custom("observerRounds", polarity: .prefersSmaller, useScalingFactor: false)
    /// One-way latency of the first send after an idle period, in nanoseconds.
    ///
    /// Thread-safety: a constant.
    public static let latencyNs = BenchmarkMetric.custom("latencyNs", polarity: .prefersSmaller, useScalingFactor: false)

    /// Idle sources registered beside the ping-pong (fd sources or far-future timers): the count
    /// actually registered, which is less than the scenario's name says when the process may not
    /// open that many descriptors.
    ///
    /// Thread-safety: a constant.
    public static let idleSources = BenchmarkMetric.custom("idleSources", polarity: .prefersSmaller, useScalingFactor: false)
    /// Process CPU time (`CLOCK_PROCESS_CPUTIME_ID`, every thread) per message in the sample, ns.
    ///
    /// Thread-safety: a constant.
    public static let cpuNsPerMessage = BenchmarkMetric.custom("cpuNsPerMessage", polarity: .prefersSmaller, useScalingFactor: false)
    /// The share of the sample's messages, in percent, that the consumer handled on the CPU the
    /// producer sent them from (`sched_getcpu` on both sides). Unpinned, a sparse stream's CPU per
    /// message depends on it: a consumer that sleeps on the producer's CPU is woken by a context
    /// switch, one that sleeps on the other vCPU by an interrupt to a halted vCPU.
    ///
    /// Thread-safety: a constant.
    public static let sameCPUPercent = BenchmarkMetric.custom("sameCPUPercent", polarity: .prefersLarger, useScalingFactor: false)
    /// The 99th percentile of the sample's per-request latencies, ns.
    ///
    /// Thread-safety: a constant.
    public static let p99Ns = BenchmarkMetric.custom("p99Ns", polarity: .prefersSmaller, useScalingFactor: false)
    /// Requests completed per second of the sample.
    ///
    /// Thread-safety: a constant.
    public static let requestsPerSecond = BenchmarkMetric.custom("requestsPerSecond", polarity: .prefersLarger, useScalingFactor: false)
    /// CPU time of the server's own threads during the sample (their `pthread_getcpuclockid`
    /// clocks), ns: the echo scenarios' cost, without the clients'.
    ///
    /// Thread-safety: a constant.
    public static let serverCPUNs = BenchmarkMetric.custom("serverCPUNs", polarity: .prefersSmaller, useScalingFactor: false)
    /// Writes in the sample that left bytes in the connection's outbound queue (the stream guard's
    /// queued variant: shows the queue's path was taken).
    ///
    /// Thread-safety: a constant.
    public static let queuedWrites = BenchmarkMetric.custom("queuedWrites", polarity: .prefersSmaller, useScalingFactor: false)

    /// What every throughput and round-trip scenario measures.
    ///
    /// Thread-safety: a constant.
    public static let standard: [BenchmarkMetric] = [
        .wallClock, .throughput, .mallocCountTotal, contextSwitches, wakeSignals, operations,
    ]
}
