import Benchmark
import Foundation
import PeerSupport

/// Makes a peer's channel whose consumer calls `receiver`.
public typealias ChannelFactory = @Sendable (Receiver) throws -> any MessageChannel

/// Holds a scenario's fixture between the benchmark's setup and teardown hooks.
final class FixtureBox<Fixture>: @unchecked Sendable {
    var fixture: Fixture?
}

/// Registers the hand-off scenarios for one peer. Names are `Scenario.Peer` with only
/// `[A-Za-z0-9._-]`, e.g. `Throughput1P.Ours.MessagePort.send`.
///
/// Thread-safety: call from the benchmark registration closure only.
public enum Scenarios {
    /// Messages per throughput sample: 1M, or `PORTRUNLOOP_BENCH_BURST` (smoke runs only; the
    /// published numbers and the CI thresholds use 1M).
    public static let burst = ProcessInfo.processInfo.environment["PORTRUNLOOP_BENCH_BURST"].flatMap { Int($0) } ?? 1_000_000
    /// Round trips per round-trip sample.
    public static let roundTrips = 1_000
    /// How long the consumer sits idle before each first-send sample.
    public static let idleMilliseconds = 10

    /// `producers` threads send `burst` messages in total; the sample ends when the consumer has
    /// handled the last one. With one producer the benchmark's own thread sends.
    /// `messages` per sample defaults to ``burst``. A peer that takes seconds per million
    /// (Foundation's RunLoop) sends fewer: package-benchmark records no throughput for a sample
    /// longer than ~2 s (it rounds samples per second to 0), and its JMH export then leaves the
    /// whole benchmark out. Results are per message either way.
    public static func throughput(_ peer: String, producers: Int, messages: Int = burst,
                                  maxDuration: Duration = .seconds(3), maxIterations: Int = 20,
                                  warmupIterations: Int = 1, factory: @escaping ChannelFactory) {
        let box = FixtureBox<ThroughputFixture>()
        Benchmark(
            "Throughput\(producers)P.\(peer)",
            configuration: .init(metrics: BenchMetrics.standard, warmupIterations: warmupIterations, scalingFactor: .kilo,
                                 maxDuration: maxDuration, maxIterations: maxIterations),
            closure: { benchmark in box.fixture!.runSample(benchmark) },
            setup: { box.fixture = try ThroughputFixture(factory: factory, producers: producers, messages: messages) },
            teardown: { box.fixture?.shutDown(); box.fixture = nil }
        )
    }

    /// Ping-pong between two consumer threads of the same peer, ``roundTrips`` per sample.
    public static func roundTrip(_ peer: String, maxDuration: Duration = .seconds(2), maxIterations: Int = 200,
                                 factory: @escaping ChannelFactory) {
        let box = FixtureBox<RoundTripFixture>()
        Benchmark(
            "RoundTrip.\(peer)",
            configuration: .init(metrics: BenchMetrics.standard, warmupIterations: 3, scalingFactor: .kilo,
                                 maxDuration: maxDuration, maxIterations: maxIterations),
            closure: { benchmark in box.fixture!.runSample(benchmark) },
            setup: { box.fixture = try RoundTripFixture(factory: factory, roundTrips: roundTrips) },
            teardown: { box.fixture?.shutDown(); box.fixture = nil }
        )
    }

    /// One message after the consumer sat idle for ``idleMilliseconds``; reports the one-way
    /// latency (send call to handler start) as `latencyNs`.
    public static func firstSendAfterIdle(_ peer: String, maxIterations: Int = 150, factory: @escaping ChannelFactory) {
        let box = FixtureBox<FirstSendFixture>()
        Benchmark(
            "FirstSendAfterIdle.\(peer)",
            configuration: .init(metrics: [.wallClock, .throughput, BenchMetrics.latencyNs, BenchMetrics.contextSwitches, BenchMetrics.operations],
                                 warmupIterations: 2, scalingFactor: .one,
                                 maxDuration: .seconds(10), maxIterations: maxIterations),
            closure: { benchmark in box.fixture!.runSample(benchmark) },
            setup: { box.fixture = try FirstSendFixture(factory: factory, idleMilliseconds: idleMilliseconds) },
            teardown: { box.fixture?.shutDown(); box.fixture = nil }
        )
    }
}

/// Reports the per-sample custom metrics.
func record(_ benchmark: Benchmark, operations: Int, contextSwitches: Int, wakeSignals: Int?) {
    benchmark.measurement(BenchMetrics.operations, operations)
    benchmark.measurement(BenchMetrics.contextSwitches, contextSwitches)
    if let wakeSignals { benchmark.measurement(BenchMetrics.wakeSignals, wakeSignals) }
}

final class ThroughputFixture {
    let receiver = Receiver(role: .sink)
    let channel: any MessageChannel
    let producers: [ProducerThread]
    let messages: Int

    init(factory: ChannelFactory, producers: Int, messages: Int) throws {
        self.channel = try factory(receiver)
        self.messages = messages
        self.producers = producers <= 1 ? [] : (0..<producers).map { [channel] _ in
            ProducerThread(channel: channel, messages: messages / producers)
        }
    }

    func runSample(_ benchmark: Benchmark) {
        let switches = ProcessCounters.contextSwitches()
        let signals = channel.wakeSignals
        receiver.expect(producers.isEmpty ? messages : messages / producers.count * producers.count)
        benchmark.startMeasurement()
        if producers.isEmpty {
            for _ in 0..<messages { channel.send() }
        } else {
            for producer in producers { producer.start() }
        }
        receiver.done.wait()
        benchmark.stopMeasurement()
        record(benchmark, operations: messages, contextSwitches: ProcessCounters.contextSwitches() - switches,
               wakeSignals: signals.flatMap { before in channel.wakeSignals.map { $0 - before } })
    }

    func shutDown() {
        for producer in producers { producer.stop() }
        channel.shutDown()
    }
}

final class RoundTripFixture {
    let pinger = Receiver(role: .pinger)
    let ponger = Receiver(role: .ponger)
    let toPinger: any MessageChannel
    let toPonger: any MessageChannel
    let roundTrips: Int

    init(factory: ChannelFactory, roundTrips: Int) throws {
        self.roundTrips = roundTrips
        toPinger = try factory(pinger)
        toPonger = try factory(ponger)
        pinger.forward = toPonger
        ponger.forward = toPinger
    }

    func runSample(_ benchmark: Benchmark) {
        let switches = ProcessCounters.contextSwitches()
        let signalsA = toPinger.wakeSignals, signalsB = toPonger.wakeSignals
        pinger.expect(roundTrips)
        benchmark.startMeasurement()
        toPonger.send()
        pinger.done.wait()
        benchmark.stopMeasurement()
        var signals: Int?
        if let signalsA, let signalsB, let nowA = toPinger.wakeSignals, let nowB = toPonger.wakeSignals {
            signals = (nowA - signalsA) + (nowB - signalsB)
        }
        record(benchmark, operations: roundTrips, contextSwitches: ProcessCounters.contextSwitches() - switches,
               wakeSignals: signals)
    }

    func shutDown() {
        toPinger.shutDown()
        toPonger.shutDown()
    }
}

final class FirstSendFixture {
    let receiver = Receiver(role: .stamp)
    let channel: any MessageChannel
    let idleMilliseconds: Int

    init(factory: ChannelFactory, idleMilliseconds: Int) throws {
        self.channel = try factory(receiver)
        self.idleMilliseconds = idleMilliseconds
    }

    func runSample(_ benchmark: Benchmark) {
        ProcessCounters.sleep(milliseconds: idleMilliseconds)
        let switches = ProcessCounters.contextSwitches()
        benchmark.startMeasurement()
        let latency = send()
        benchmark.stopMeasurement()
        benchmark.measurement(BenchMetrics.latencyNs, latency)
        record(benchmark, operations: 1, contextSwitches: ProcessCounters.contextSwitches() - switches, wakeSignals: nil)
    }

    /// Idles, then sends one message: its latency, ns (``runSample(_:)`` without the harness).
    func measureOnce() -> Int {
        ProcessCounters.sleep(milliseconds: idleMilliseconds)
        return send()
    }

    /// Sends one message and waits for it: from the send to its arrival, ns.
    private func send() -> Int {
        let sent = ProcessCounters.nanoseconds()
        channel.send()
        receiver.done.wait()
        return Int(receiver.lastArrival &- sent)
    }

    func shutDown() { channel.shutDown() }
}
