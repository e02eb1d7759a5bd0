import Benchmark
import Foundation
import PeerSupport

extension Scenarios {
    /// Round trips per `BusNotification.RoundTrip` sample.
    ///
    /// Thread-safety: a constant.
    public static let busNotificationRoundTrips = 200

    /// Registers `BusNotification.Throughput.<T>.<I>` and `BusNotification.RoundTrip.<T>.<I>` for
    /// one peer (Docs/Benchmarks.md, "Bus notifications"): a private dbus-daemon or redis-server,
    /// and a second process (`CrossProcessBenchPeer notify-send|notify-echo`) on the same
    /// implementation as the benchmark's side. A bare peer registers its throughput only
    /// (`BusNotification.Throughput.<T>.<I>.Bare`).
    ///
    /// Thread-safety: call from the benchmark registration closure only.
    public static func busNotification(_ peer: BusNotificationPeer) {
        let metrics: [BenchmarkMetric] = [.wallClock, .throughput, .mallocCountTotal, BenchMetrics.contextSwitches,
                                          BenchMetrics.operations]
        let throughput = FixtureBox<BusNotificationFixture>()
        Benchmark(
            "BusNotification.Throughput.\(peer.transport).\(peer.rowName)",
            configuration: .init(metrics: metrics, warmupIterations: 1, scalingFactor: .kilo,
                                 maxDuration: .seconds(3), maxIterations: 30),
            closure: { benchmark in throughput.fixture!.runBurst(benchmark) },
            setup: { throughput.fixture = try BusNotificationFixture(peer, roundTrips: false) },
            teardown: { throughput.fixture?.shutDown(); throughput.fixture = nil }
        )
        guard !peer.bare else { return } // no seq travels: bursts only
        let roundTrip = FixtureBox<BusNotificationFixture>()
        Benchmark(
            "BusNotification.RoundTrip.\(peer.transport).\(peer.rowName)",
            configuration: .init(metrics: metrics + [BenchMetrics.p99Ns], warmupIterations: 2, scalingFactor: .kilo,
                                 maxDuration: .seconds(3), maxIterations: 50),
            closure: { benchmark in roundTrip.fixture!.runRoundTrips(benchmark) },
            setup: { roundTrip.fixture = try BusNotificationFixture(peer, roundTrips: true) },
            teardown: { roundTrip.fixture?.shutDown(); roundTrip.fixture = nil }
        )
    }
}

/// A private bus or server, the peer process, and this process's side.
final class BusNotificationFixture {
    let directory: String
    let bus: PrivateBus?
    let redis: PrivateRedis?
    let peerProcess: PeerProcess
    let side: any BusNotificationSide
    let burst: Int
    var received = 0
    var latencies: [Int64]

    init(_ peer: BusNotificationPeer, roundTrips: Bool) throws {
        let executable = try PeerProcess.sibling("CrossProcessBenchPeer")
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("portrunloop-bench-\(getpid())-\(UInt32.random(in: 0 ... .max))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let address: String
        if peer.transport == "DBus" {
            let bus = try PrivateBus(directory: directory)
            (self.bus, redis) = (bus, nil)
            address = bus.address
        } else {
            let redis = try PrivateRedis()
            (bus, self.redis) = (nil, redis)
            address = "\(redis.port)"
        }
        // The answering peer observes before this side's first ping; the receiving side observes
        // before the first burst is asked for.
        peerProcess = try PeerProcess(executable: executable,
                                      arguments: [roundTrips ? "notify-echo" : "notify-send", peer.argument, address])
        try peerProcess.expect("ready")
        side = try peer.connect(address, role: roundTrips ? .pinger : .receiver)
        burst = peer.burst
        latencies = Array(repeating: 0, count: Scenarios.busNotificationRoundTrips)
    }

    func runBurst(_ benchmark: Benchmark) {
        let switches = ProcessCounters.contextSwitches()
        benchmark.startMeasurement()
        do {
            try peerProcess.send("burst \(burst)")
            try side.waitForReceived(received + burst)
        } catch {
            fatalError("\(benchmark.name): \(error)")
        }
        benchmark.stopMeasurement()
        received += burst
        do { try peerProcess.expect("done") } catch { fatalError("\(benchmark.name): \(error)") }
        record(benchmark, operations: burst, contextSwitches: ProcessCounters.contextSwitches() - switches, wakeSignals: nil)
    }

    func runRoundTrips(_ benchmark: Benchmark) {
        let switches = ProcessCounters.contextSwitches()
        let count = Scenarios.busNotificationRoundTrips
        benchmark.startMeasurement()
        let failure: (any Error)? = latencies.withUnsafeMutableBufferPointer { buffer in
            do { try side.roundTrips(count, latencies: buffer.baseAddress!) } catch { return error }
            return nil
        }
        benchmark.stopMeasurement()
        if let failure { fatalError("\(benchmark.name): \(failure)") }
        let sorted = latencies.sorted()
        benchmark.measurement(BenchMetrics.p99Ns, Int(sorted[(sorted.count * 99 + 99) / 100 - 1]))
        record(benchmark, operations: count, contextSwitches: ProcessCounters.contextSwitches() - switches, wakeSignals: nil)
    }

    func shutDown() {
        side.close()
        peerProcess.stop()
        bus?.stop()
        redis?.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
