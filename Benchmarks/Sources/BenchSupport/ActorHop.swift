import Benchmark
import PeerSupport
import PortRunLoopKit

/// An actor the actor-hop scenario calls into; each call hops onto the actor's executor and back.
///
/// Thread-safety: an actor.
public protocol HopTarget: Actor {
    /// A trivial isolated method: the cost measured is the hop, not the work.
    func touch() -> Int
}

/// An actor pinned to a ``PortRunLoop`` through the loop's `SerialExecutor` conformance.
///
/// Thread-safety: an actor; runs on the loop's thread.
public actor LoopPinnedActor: HopTarget {
    /// The loop thread the actor lives on.
    public nonisolated let thread: RunLoopThread
    private var count = 0

    /// Pins the actor to a new loop thread.
    public init() throws { thread = try RunLoopThread(name: "bench.actor") }

    public nonisolated var unownedExecutor: UnownedSerialExecutor { thread.loop.unownedExecutor }

    public func touch() -> Int { count &+= 1; return count }
}

/// A plain actor on Swift's default executor (the global cooperative pool).
///
/// Thread-safety: an actor.
public actor DefaultExecutorActor: HopTarget {
    private var count = 0
    /// Makes the actor.
    public init() {}
    public func touch() -> Int { count &+= 1; return count }
}

extension Scenarios {
    /// ``roundTrips`` awaited calls per sample from a task on the default executor into an actor.
    public static func actorHop(_ peer: String, make: @escaping @Sendable () throws -> any HopTarget,
                                tearDown: @escaping @Sendable (any HopTarget) -> Void = { _ in }) {
        let box = FixtureBox<any HopTarget>()
        Benchmark(
            "ActorHop.\(peer)",
            configuration: .init(metrics: BenchMetrics.standard, warmupIterations: 3, scalingFactor: .kilo,
                                 maxDuration: .seconds(2), maxIterations: 200),
            closure: { (benchmark: Benchmark) async in
                let target = box.fixture!
                let switches = ProcessCounters.contextSwitches()
                benchmark.startMeasurement()
                for _ in 0..<roundTrips { _ = await target.touch() }
                benchmark.stopMeasurement()
                record(benchmark, operations: roundTrips,
                       contextSwitches: ProcessCounters.contextSwitches() - switches, wakeSignals: nil)
            },
            setup: { box.fixture = try make() },
            teardown: { if let target = box.fixture { tearDown(target) }; box.fixture = nil }
        )
    }
}
