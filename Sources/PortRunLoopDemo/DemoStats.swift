import Foundation

/// Counters and samples the demo prints as evidence. Thread-safe: `state` is guarded by `lock` (an
/// `NSLock`, which ThreadSanitizer sees).
final class DemoStats: @unchecked Sendable {
    struct Batch: Sendable { let items: Int; let thread: String }

    private let lock = NSLock()
    private var state = State() // guarded by `lock`
    private struct State {
        var batches: [Batch] = []
        var emptyWakeups = 0
        var doorbellsSent = 0
        var doorbellsDropped = 0
    }

    private func withState<R>(_ body: (inout State) -> R) -> R {
        lock.withLock { body(&state) }
    }

    func recordBatch(items: Int, thread: String) {
        withState {
            if items == 0 { $0.emptyWakeups += 1 } else { $0.batches.append(Batch(items: items, thread: thread)) }
        }
    }
    func doorbellSent() { withState { $0.doorbellsSent += 1 } }
    func doorbellDropped() { withState { $0.doorbellsDropped += 1 } }

    var batches: [Batch] { withState { $0.batches } }
    var emptyWakeups: Int { withState { $0.emptyWakeups } }
    var doorbellsSent: Int { withState { $0.doorbellsSent } }
    var doorbellsDropped: Int { withState { $0.doorbellsDropped } }
}

/// Delivery latencies in nanoseconds, with percentiles.
struct LatencySummary {
    let sorted: [UInt64]
    init(_ samples: [UInt64]) { sorted = samples.sorted() }
    func percentile(_ p: Double) -> UInt64 {
        guard !sorted.isEmpty else { return 0 }
        let index = min(sorted.count - 1, Int((Double(sorted.count) * p / 100).rounded(.up)) - 1)
        return sorted[max(index, 0)]
    }
    static func format(_ ns: UInt64) -> String {
        ns >= 1_000_000 ? String(format: "%.2f ms", Double(ns) / 1e6) : String(format: "%.1f µs", Double(ns) / 1e3)
    }
}

/// Monotonic nanoseconds (`clock_gettime(CLOCK_MONOTONIC)`).
func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}
