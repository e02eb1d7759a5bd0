import Benchmark
import PeerSupport

/// Scenarios that measure every peer in turn inside each sample, so that all of them see the same
/// state of the host. A sparse stream's CPU per message and a first send after an idle spell are
/// decided mostly by how the host schedules an idle vCPU and a sleeping thread, which drifts over
/// seconds: run one peer after another as separate benchmarks, each peer meets a different host
/// (the producer alone, `SparseCPU.Inline`, moved between 16 and 32 µs per message from one full
/// run to the next). Here each sample measures every peer, starting with a different one each
/// time, and records one custom metric per peer (`<metric>.<peer>`); the ratios of their medians
/// are the targets' measure, and the separate benchmarks stay for reference.
extension Scenarios {
    /// Registers `SparseCPU.Interleaved.<gap>`: per sample, for each of `peers` in turn (rotating
    /// the first), its share of `gap.messages` (a sample lasts as long as one of
    /// ``sparseCPU(_:gap:factory:)``'s) one gap apart, as that scenario sends them. Records `cpuNsPerMessage.<peer>` (process CPU over that peer's messages,
    /// divided by them) and `sameCPUPercent.<peer>`.
    ///
    /// Thread-safety: call from the benchmark registration closure only.
    public static func sparseCPUInterleaved(gap: SparseGap, peers: [(name: String, factory: ChannelFactory)]) {
        let box = FixtureBox<[(name: String, fixture: SparseFixture)]>()
        let metrics = peers.flatMap { [cpuMetric($0.name), placementMetric($0.name)] }
        let rotation = Rotation()
        Benchmark(
            "SparseCPU.Interleaved.\(gap.label)",
            configuration: .init(metrics: [.wallClock, .throughput, BenchMetrics.operations] + metrics,
                                 warmupIterations: 1, scalingFactor: .one,
                                 maxDuration: .seconds(12), maxIterations: 10),
            closure: { benchmark in
                let fixtures = box.fixture!
                let messages = gap.messages / fixtures.count
                benchmark.startMeasurement()
                for (name, fixture) in rotation.next(fixtures) {
                    let (cpu, placed) = fixture.measure(messages: messages)
                    benchmark.measurement(cpuMetric(name), cpu)
                    benchmark.measurement(placementMetric(name), placed)
                }
                benchmark.stopMeasurement()
                benchmark.measurement(BenchMetrics.operations, messages * fixtures.count)
            },
            setup: { box.fixture = try peers.map { ($0.name, try SparseFixture(factory: $0.factory, gap: gap)) } },
            teardown: { box.fixture?.forEach { $0.fixture.shutDown() }; box.fixture = nil }
        )
    }

    /// Registers `FirstSendAfterIdle.Interleaved`: per sample, for each of `peers` in turn
    /// (rotating the first), the consumer idles ``idleMilliseconds`` and one message is sent, as in
    /// ``firstSendAfterIdle(_:maxIterations:factory:)``. Records `latencyNs.<peer>`.
    ///
    /// Thread-safety: call from the benchmark registration closure only.
    public static func firstSendAfterIdleInterleaved(peers: [(name: String, factory: ChannelFactory)], maxIterations: Int = 150) {
        let box = FixtureBox<[(name: String, fixture: FirstSendFixture)]>()
        let rotation = Rotation()
        Benchmark(
            "FirstSendAfterIdle.Interleaved",
            configuration: .init(metrics: [.wallClock, .throughput, BenchMetrics.operations] + peers.map { latencyMetric($0.name) },
                                 warmupIterations: 2, scalingFactor: .one,
                                 maxDuration: .seconds(Int64(peers.count) * 4), maxIterations: maxIterations),
            closure: { benchmark in
                let fixtures = box.fixture!
                benchmark.startMeasurement()
                for (name, fixture) in rotation.next(fixtures) {
                    benchmark.measurement(latencyMetric(name), fixture.measureOnce())
                }
                benchmark.stopMeasurement()
                benchmark.measurement(BenchMetrics.operations, fixtures.count)
            },
            setup: { box.fixture = try peers.map { ($0.name, try FirstSendFixture(factory: $0.factory, idleMilliseconds: idleMilliseconds)) } },
            teardown: { box.fixture?.forEach { $0.fixture.shutDown() }; box.fixture = nil }
        )
    }

    private static func cpuMetric(_ peer: String) -> BenchmarkMetric {
        .custom("cpuNsPerMessage.\(peer)", polarity: .prefersSmaller, useScalingFactor: false)
    }

    private static func placementMetric(_ peer: String) -> BenchmarkMetric {
        .custom("sameCPUPercent.\(peer)", polarity: .prefersLarger, useScalingFactor: false)
    }

    private static func latencyMetric(_ peer: String) -> BenchmarkMetric {
        .custom("latencyNs.\(peer)", polarity: .prefersSmaller, useScalingFactor: false)
    }
}

/// The order of an interleaved sample: each sample starts one peer later than the last, so no
/// peer always runs first (after the harness's own work) or right after the same neighbour.
///
/// Thread-safety: `@unchecked Sendable`; used by one benchmark's closure, which the harness runs
/// one sample at a time.
final class Rotation: @unchecked Sendable {
    private var start = 0

    func next<T>(_ items: [T]) -> [T] {
        defer { start += 1 }
        let first = start % items.count
        return Array(items[first...] + items[..<first])
    }
}
