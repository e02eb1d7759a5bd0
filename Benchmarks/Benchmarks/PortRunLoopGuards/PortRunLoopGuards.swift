import Benchmark
import BenchSupport

/// What CI guards (Scripts/check-benchmark-thresholds.sh): allocation and wake-signal counts of
/// our hot paths, which do not swing with machine load the way wall-clock time does. Thresholds
/// live in Benchmarks/Thresholds/guards.json.
let benchmarks: @Sendable () -> Void = {
    let ours: [(name: String, factory: ChannelFactory)] = [
        ("Ours.perform", { try PortRunLoopPerformChannel(receiver: $0) }),
        ("Ours.MessagePort.send", { try MessagePortChannel(receiver: $0) }),
    ]
    for peer in ours {
        Scenarios.throughput(peer.name, producers: 1, maxDuration: .seconds(2), maxIterations: 6, factory: peer.factory)
        Scenarios.throughput(peer.name, producers: 2, maxDuration: .seconds(2), maxIterations: 6, factory: peer.factory)
        Scenarios.roundTrip(peer.name, maxDuration: .seconds(1), maxIterations: 30, factory: peer.factory)
    }
}
