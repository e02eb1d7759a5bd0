import Benchmark
import CBenchSupport
import PeerSupport

extension Scenarios {
    /// The pacing of a sparse-traffic scenario: one message every `gap`, `messages` per sample.
    ///
    /// Thread-safety: a value type; `Sendable`.
    public struct SparseGap: Sendable {
        /// As it appears in the benchmark name (`50us`, `200us`, `1ms`).
        ///
        /// Thread-safety: immutable.
        public let label: String
        /// Time between two sends, ns.
        ///
        /// Thread-safety: immutable.
        public let nanoseconds: UInt64
        /// Messages per sample (so that a sample lasts 0.2 to 1 s).
        ///
        /// Thread-safety: immutable.
        public let messages: Int

        /// The gaps every sparse peer runs: 50 µs × 4000, 200 µs × 2500, 1 ms × 1000.
        ///
        /// Thread-safety: a constant.
        public static let all: [SparseGap] = [
            SparseGap(label: "50us", nanoseconds: 50_000, messages: 4000),
            SparseGap(label: "200us", nanoseconds: 200_000, messages: 2500),
            SparseGap(label: "1ms", nanoseconds: 1_000_000, messages: 1000),
        ]
    }

    /// Registers `SparseCPU.<peer>.<gap>`: the benchmark's thread sends one message every gap
    /// (paced with `clock_nanosleep` to absolute deadlines, no spinning) to the peer's consumer;
    /// a sample ends when the consumer handled the last one. Reports `cpuNsPerMessage`: the
    /// process's CPU time over the sample (every thread: producer, consumer, runtime) divided by the
    /// messages; `sameCPUPercent`: the share of messages the consumer handled on the CPU they were
    /// sent from; and wall clock, context switches, mallocs and `operations` (messages).
    ///
    /// Thread-safety: call from the benchmark registration closure only.
    public static func sparseCPU(_ peer: String, gap: SparseGap, factory: @escaping ChannelFactory) {
        let box = FixtureBox<SparseFixture>()
        Benchmark(
            "SparseCPU.\(peer).\(gap.label)",
            configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal, BenchMetrics.cpuNsPerMessage,
                                           BenchMetrics.sameCPUPercent, BenchMetrics.contextSwitches,
                                           BenchMetrics.operations],
                                 warmupIterations: 1, scalingFactor: .one, maxDuration: .seconds(6), maxIterations: 10),
            closure: { benchmark in box.fixture!.runSample(benchmark) },
            setup: { box.fixture = try SparseFixture(factory: factory, gap: gap) },
            teardown: { box.fixture?.shutDown(); box.fixture = nil }
        )
    }
}

/// A consumer fed one message per gap by the benchmark's thread (see ``Scenarios/sparseCPU``).
final class SparseFixture {
    let receiver = Receiver(role: .placedSink)
    let channel: any MessageChannel
    let gap: Scenarios.SparseGap

    init(factory: ChannelFactory, gap: Scenarios.SparseGap) throws {
        self.channel = try factory(receiver)
        self.gap = gap
    }

    func runSample(_ benchmark: Benchmark) {
        let switches = ProcessCounters.contextSwitches()
        benchmark.startMeasurement()
        let (cpuPerMessage, placed) = measure(messages: gap.messages)
        benchmark.stopMeasurement()
        benchmark.measurement(BenchMetrics.cpuNsPerMessage, cpuPerMessage)
        benchmark.measurement(BenchMetrics.sameCPUPercent, placed)
        record(benchmark, operations: gap.messages, contextSwitches: ProcessCounters.contextSwitches() - switches,
               wakeSignals: nil)
    }

    /// Sends `messages` one gap apart and waits until the consumer handled the last: the process
    /// CPU per message, ns, and the percentage handled on the producer's CPU.
    func measure(messages: Int) -> (cpuNsPerMessage: Int, sameCPUPercent: Int) {
        receiver.expect(messages)
        let cpu = ProcessCounters.cpuNanoseconds()
        var next = ProcessCounters.nanoseconds()
        for _ in 0..<messages {
            next &+= gap.nanoseconds
            ProcessCounters.sleep(untilNanoseconds: next)
            receiver.producerCPU.store(sched_getcpu(), ordering: .relaxed)
            channel.send()
        }
        receiver.done.wait()
        return (Int((ProcessCounters.cpuNanoseconds() - cpu) / UInt64(messages)), receiver.onProducerCPU * 100 / messages)
    }

    func shutDown() { channel.shutDown() }
}
