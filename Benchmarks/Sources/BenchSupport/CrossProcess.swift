import Benchmark
import Foundation
import PeerSupport

extension Scenarios {
    /// Bytes per cross-process message (the first is its kind).
    ///
    /// Thread-safety: a constant.
    public static let crossProcessMessageSize = 16
    /// Round trips per `CrossProcess.RoundTrip` sample.
    ///
    /// Thread-safety: a constant.
    public static let crossProcessRoundTrips = 1_000

    /// Registers `CrossProcess.RoundTrip.<T>`, `CrossProcess.Throughput1P.<T>` and
    /// `CrossProcess.Throughput4P.<T>` for one transport: a server in a second process
    /// (`CrossProcessBenchPeer serve`), and as clients the benchmark's own thread (round trips, one
    /// sender) or four sender processes (`CrossProcessBenchPeer send`), 25,000 messages each.
    ///
    /// `roundTripOnly`: only `CrossProcess.RoundTrip.<T>` (a transport whose bursts are another's).
    ///
    /// Thread-safety: call from the benchmark registration closure only.
    public static func crossProcess(_ transport: CrossProcessTransport, roundTripOnly: Bool = false) {
        let metrics: [BenchmarkMetric] = [.wallClock, .throughput, .mallocCountTotal, BenchMetrics.contextSwitches,
                                          BenchMetrics.operations]
        let roundTrip = FixtureBox<CrossProcessFixture>()
        Benchmark(
            "CrossProcess.RoundTrip.\(transport.name)",
            configuration: .init(metrics: metrics + [BenchMetrics.p99Ns], warmupIterations: 2, scalingFactor: .kilo,
                                 maxDuration: .seconds(3), maxIterations: 100),
            closure: { benchmark in roundTrip.fixture!.runRoundTrips(benchmark) },
            setup: { roundTrip.fixture = try CrossProcessFixture(transport, senders: 0) },
            teardown: { roundTrip.fixture?.shutDown(); roundTrip.fixture = nil }
        )
        for senders in [1, 4] where !roundTripOnly {
            let box = FixtureBox<CrossProcessFixture>()
            Benchmark(
                "CrossProcess.Throughput\(senders)P.\(transport.name)",
                configuration: .init(metrics: metrics, warmupIterations: 1, scalingFactor: .kilo,
                                     maxDuration: .seconds(4), maxIterations: 30),
                closure: { benchmark in box.fixture!.runBurst(benchmark) },
                setup: { box.fixture = try CrossProcessFixture(transport, senders: senders == 1 ? 0 : senders) },
                teardown: { box.fixture?.shutDown(); box.fixture = nil }
            )
        }
    }
}

/// A server peer process, and either a client in this process or sender processes.
final class CrossProcessFixture {
    let directory: String
    let bus: PrivateBus?
    let server: PeerProcess
    let client: (any CrossProcessClient)?
    let senders: [PeerProcess]
    var latencies: [Int64]
    let burst: Int

    init(_ transport: CrossProcessTransport, senders count: Int) throws {
        let peer = try PeerProcess.sibling("CrossProcessBenchPeer")
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("portrunloop-bench-\(getpid())-\(UInt32.random(in: 0 ... .max))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let address: String
        switch transport.peerArgument {
        case "dbus":
            let bus = try PrivateBus(directory: directory)
            self.bus = bus
            address = bus.address
        case "ours":
            bus = nil
            address = "bench-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        default:
            bus = nil
            address = "\(directory)/\(transport.peerArgument).sock"
        }
        server = try PeerProcess(executable: peer, arguments: ["serve", transport.peerArgument, address])
        try server.expect("ready")
        if count == 0 {
            client = try transport.connect(address)
            senders = []
        } else {
            client = nil
            senders = try (0..<count).map { _ in
                let sender = try PeerProcess(executable: peer, arguments: [
                    "send", transport.peerArgument, address, "\(Scenarios.crossProcessMessageSize)"])
                try sender.expect("ready")
                return sender
            }
        }
        latencies = Array(repeating: 0, count: Scenarios.crossProcessRoundTrips)
        burst = transport.burst
    }

    func runRoundTrips(_ benchmark: Benchmark) {
        let switches = ProcessCounters.contextSwitches()
        let count = Scenarios.crossProcessRoundTrips
        benchmark.startMeasurement()
        let failure: (any Error)? = latencies.withUnsafeMutableBufferPointer { buffer in
            do { try client!.roundTrips(count, size: Scenarios.crossProcessMessageSize, latencies: buffer.baseAddress) } catch { return error }
            return nil
        }
        benchmark.stopMeasurement()
        if let failure { fatalError("\(benchmark.name): \(failure)") }
        let sorted = latencies.sorted()
        benchmark.measurement(BenchMetrics.p99Ns, Int(sorted[(sorted.count * 99 + 99) / 100 - 1]))
        record(benchmark, operations: count, contextSwitches: ProcessCounters.contextSwitches() - switches, wakeSignals: nil)
    }

    func runBurst(_ benchmark: Benchmark) {
        let switches = ProcessCounters.contextSwitches()
        let total = burst
        benchmark.startMeasurement()
        do {
            if let client {
                try client.burst(total, size: Scenarios.crossProcessMessageSize)
            } else {
                for sender in senders { try sender.send("burst \(total / senders.count)") }
                for sender in senders { try sender.expect("done") }
            }
        } catch {
            fatalError("\(benchmark.name): \(error)")
        }
        benchmark.stopMeasurement()
        record(benchmark, operations: total, contextSwitches: ProcessCounters.contextSwitches() - switches, wakeSignals: nil)
    }

    func shutDown() {
        client?.close()
        for sender in senders { sender.stop() }
        server.stop()
        bus?.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
