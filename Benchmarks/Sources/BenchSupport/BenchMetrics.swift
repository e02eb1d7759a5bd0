import Benchmark

/// The custom metrics every scenario reports (all raw per sample: no scaling factor applied, so
/// Scripts/plot-benchmarks.py and the threshold checker can normalise them exactly).
///
/// Thread-safety: constants.
public enum BenchMetrics {
    /// Context switches of the whole process during the sample (getrusage; see ``ProcessCounters``).
    public static let contextSwitches = BenchmarkMetric.custom("contextSwitches", polarity: .prefersSmaller, useScalingFactor: false)
    /// Times a producer had to wake the consumer during the sample (peers that can count them).
    public static let wakeSignals = BenchmarkMetric.custom("wakeSignals", polarity: .prefersSmaller, useScalingFactor: false)
    /// Operations in the sample: messages (throughput), round trips, or 1 (first send after idle).
    public static let operations = BenchmarkMetric.custom("operations", polarity: .prefersLarger, useScalingFactor: false)
    /// `event_add` + `event_del` calls a loop made during the sample (``PortRunLoop/metrics``).
    public static let eventRegistrations = BenchmarkMetric.custom("eventRegistrations", polarity: .prefersSmaller, useScalingFactor: false)
    /// One-way latency of the first send after an idle period, in nanoseconds.
    public static let latencyNs = BenchmarkMetric.custom("latencyNs", polarity: .prefersSmaller, useScalingFactor: false)

    /// What every throughput and round-trip scenario measures.
    public static let standard: [BenchmarkMetric] = [
        .wallClock, .throughput, .mallocCountTotal, contextSwitches, wakeSignals, operations,
    ]
}
