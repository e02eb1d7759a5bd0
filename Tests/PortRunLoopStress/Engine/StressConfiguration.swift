import Foundation

/// What one stress run does: how many producers, items and loops, which seed, for how long.
///
/// Every random choice of a run derives from ``seed`` (rounds, producers and chaos each get their
/// own sub-stream), so a failing run is replayed by passing the printed seed back
/// (`--seed`, or the `PORTRUNLOOP_STRESS_SEED` environment variable). Thread scheduling is not
/// replayed, of course: the seed fixes what is done, not how the threads interleave.
///
/// Thread-safety: a value type; `Sendable`.
public struct StressConfiguration: Sendable, CustomStringConvertible {
    /// The seed every random choice derives from.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var seed: UInt64
    /// Producer threads per round.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var producers: Int = 4
    /// Operations each producer performs per round.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var itemsPerProducer: Int = 2_000
    /// Consumer loops alive at any time (each on its own thread).
    /// Thread-safety: a field of a value type (`Sendable`).
    public var loops: Int = 3
    /// Ports scheduled in each consumer loop (replaced when invalidated).
    /// Thread-safety: a field of a value type (`Sendable`).
    public var portsPerLoop: Int = 2
    /// Keep starting new rounds until this many seconds have passed (nil: one round).
    /// Thread-safety: a field of a value type (`Sendable`).
    public var duration: Double?
    /// Port invalidation, loop stop/restart and consumer thread exit while traffic flows.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var chaos: Bool = true
    /// Notification posts and observer add/remove through the thread notification center.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var notifications: Bool = true
    /// Fd sources: pipes and socketpairs watched on the consumer loops, written by the producers,
    /// cancelled from other threads while ready (with chaos) and at the round's end.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var fileDescriptors: Bool = true
    /// Watched pipes per consumer loop (replaced when chaos cancels one).
    /// Thread-safety: a field of a value type (`Sendable`).
    public var pipesPerLoop: Int = 2
    /// Timers: one-shot and 0.1–1 ms repeating timers added to the consumer loops from other
    /// threads, re-armed by setting `fireDate` (from their blocks, and one-shots from other threads,
    /// some inside the very turn that fires them), invalidated from other threads while firing
    /// (with chaos).
    /// Thread-safety: a field of a value type (`Sendable`).
    public var timers: Bool = true
    /// Run-loop observers and custom input sources (``RunLoopObserver``, ``RunLoopSource``): a
    /// set of observers on every consumer loop (repeating and one-shot, of all or some activities,
    /// in several orders, in the default, the common or a mode never run) and custom sources
    /// signalled from the producer threads many times; with chaos, observers and sources
    /// invalidated or removed from other threads while the loop runs, and new ones added.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var observersAndSources: Bool = true
    /// A round that has not finished after this many seconds is a hang: the run aborts with a
    /// diagnostic (a deadlock must never pass as a slow run).
    /// Thread-safety: a field of a value type (`Sendable`).
    public var roundTimeout: Double = 240
    /// Print one line per round.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var verbose: Bool = false

    /// A configuration with the given seed and the defaults above.
    ///
    /// Thread-safety: a value type.
    public init(seed: UInt64) { self.seed = seed }

    /// The seed from `PORTRUNLOOP_STRESS_SEED` (decimal or 0x-hex) when set, otherwise a fresh
    /// random one.
    ///
    /// Thread-safety: reads the environment; any thread.
    public static func seedFromEnvironment(_ name: String = "PORTRUNLOOP_STRESS_SEED") -> UInt64 {
        if let text = ProcessInfo.processInfo.environment[name], let value = parseSeed(text) { return value }
        return UInt64.random(in: 1...UInt64.max)
    }

    /// Parses a decimal or `0x` hexadecimal seed.
    ///
    /// Thread-safety: a pure function.
    public static func parseSeed(_ text: String) -> UInt64? {
        let t = text.trimmingCharacters(in: .whitespaces)
        if t.hasPrefix("0x") || t.hasPrefix("0X") { return UInt64(t.dropFirst(2), radix: 16) }
        return UInt64(t)
    }

    /// One line naming every parameter, the seed first.
    ///
    /// Thread-safety: a value type.
    public var description: String {
        "seed=\(seed) producers=\(producers) items=\(itemsPerProducer) loops=\(loops) ports/loop=\(portsPerLoop) "
            + "duration=\(duration.map { "\($0)s" } ?? "1 round") chaos=\(chaos) notifications=\(notifications) "
            + "fds=\(fileDescriptors)\(fileDescriptors ? " pipes/loop=\(pipesPerLoop)" : "") timers=\(timers) "
            + "observers+sources=\(observersAndSources)"
    }
}
