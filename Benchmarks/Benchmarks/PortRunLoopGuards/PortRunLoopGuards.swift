import Benchmark
import BenchSupport
import PortRunLoopKit

/// What CI guards (Scripts/check-benchmark-thresholds.sh): allocation, wake-signal, libevent
/// registration and observer-round counts of our hot paths, which, unlike wall-clock time, do not swing with the load on the machine.
/// Thresholds: Benchmarks/Thresholds/guards.json. The scenarios are the full suite's
/// (PortRunLoopBenchmarks), for ours only and with fewer samples; this target does not build NIO.
let benchmarks: @Sendable () -> Void = {
    let ours: [(name: String, factory: ChannelFactory)] = [
        ("Ours.perform", { try PortRunLoopPerformChannel(receiver: $0) }),
        ("Ours.MessagePort.send", { try MessagePortChannel(receiver: $0) }),
    ]
    for peer in ours {
        Scenarios.throughput(peer.name, producers: 1, maxDuration: .seconds(2), maxIterations: 8, factory: peer.factory)
        Scenarios.throughput(peer.name, producers: 2, maxDuration: .seconds(2), maxIterations: 8, factory: peer.factory)
        Scenarios.roundTrip(peer.name, maxDuration: .seconds(1), maxIterations: 40, factory: peer.factory)
    }
    Scenarios.roundTrip("Ours.RunLoopSource.signal", maxDuration: .seconds(1), maxIterations: 40) {
        try PortRunLoopSourceChannel(receiver: $0)
    }
    Scenarios.roundTrip("Ours.perform.10observers", maxDuration: .seconds(1), maxIterations: 40) {
        try ObservedPerformChannel(receiver: $0, observers: 10)
    }
    Scenarios.syncRoundTrip("Ours.performAndWait", maxIterations: 40) {
        let thread = try RunLoopThread(name: "bench.sync")
        return SyncRoundTripFixture(calls: Scenarios.roundTrips, call: { try? thread.loop.performAndWait {} },
                                    tearDown: { thread.stop() })
    }
    Scenarios.runEntry("Ours.Idle10k", idle: 10_000, timers: 1_000, maxIterations: 20)
    // No observers, no cost: a loop without observers makes no round of observer calls; beside it
    // the same turns with 10 observers make exactly four rounds each (the counter counts).
    Scenarios.observerRounds("Ours.perform", observers: 0, maxIterations: 20)
    Scenarios.observerRounds("Ours.perform.10observers", observers: 10, maxIterations: 20)
    Scenarios.timerChurn("Ours") { try PortRunLoopTimerChurn() }
    Scenarios.streamEcho(.direct, maxIterations: 10)
    Scenarios.streamEcho(.queued, maxIterations: 10)
}
