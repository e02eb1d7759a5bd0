import Foundation

/// What a scenario's handler saw of numbered notifications from several posters: how many, which
/// came out of order (per poster), which were handled off the chosen thread, and their latencies.
/// Written only on the chosen thread, read once the scenario has waited for them all.
///
/// Thread-safety: `@unchecked Sendable`; confined to the chosen thread until the scenario reads it
/// after that thread signalled (the signal orders the writes before the reads).
class DeliveryEvidence: @unchecked Sendable {
    private(set) var count = 0
    private(set) var outOfOrder = 0
    private(set) var wrongThread = 0
    private(set) var latencies: [UInt64] = []
    private var nextSeq: [UInt64]
    private let total: Int

    init(posters: Int, total: Int) {
        nextSeq = Array(repeating: 0, count: posters)
        self.total = total
        latencies.reserveCapacity(total)
    }

    /// Whether `poster` is one of the posters counted here.
    func knows(poster: Int) -> Bool { poster >= 0 && poster < nextSeq.count }

    /// Counts a handler call made off the chosen thread (`onChosenThread` false).
    func checkThread(onChosenThread: Bool) {
        if !onChosenThread { wrongThread += 1 }
    }

    /// Records notification `seq` of `poster`, posted at `postedAt` and handled at `handledAt`
    /// (monotonic nanoseconds). True once all `total` have been recorded.
    func record(poster: Int, seq: UInt64, postedAt: UInt64, handledAt: UInt64) -> Bool {
        if seq != nextSeq[poster] { outOfOrder += 1 }
        nextSeq[poster] = seq + 1
        latencies.append(handledAt &- postedAt)
        count += 1
        return count == total
    }
}
