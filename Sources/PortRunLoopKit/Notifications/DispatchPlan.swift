import Foundation

/// What posting one notification name does (for `post`, `postAndWait` and Foundation observers
/// alike: ``ThreadNotificationCenter/deliver(_:by:synchronous:deadline:)``), worked out once per
/// change of the center's observations instead of once per post: the matching observations in registration order, and
/// the same observations grouped by the lane (thread and modes) they are delivered through.
///
/// A post then costs one look-up (usually none: the center keeps the last plan used, and a name
/// compares equal to itself without hashing), one lock per lane and no allocation. Plans are
/// dropped whenever an observation is added or removed; an observation that ended after its plan
/// was made is still skipped (its gate is closed), so a stale plan is never wrong, only slower.
///
/// Thread-safety: `Sendable`; immutable.
final class DispatchPlan: Sendable {
    /// The observations of one lane, in registration order.
    ///
    /// Its lane and records are kept alive by the plan's `records` (a record holds its lane), and
    /// held unmanaged so that a post walks them without a retain and a release each.
    struct LaneGroup: Sendable {
        let lane: Unmanaged<DeliveryLane>
        let records: [Unmanaged<ObserverRecord>]

        /// Whether the lane's loop is the calling thread's (its observers are then called inline).
        var isOnCurrentThread: Bool { lane._withUnsafeGuaranteedRef { $0.loop.isCurrentThread } }

        /// The lane's loop.
        var loop: PortRunLoop { lane._withUnsafeGuaranteedRef { $0.loop } }

        /// How many of this group's records a post from `sender` is for (a synchronous post counts
        /// its deliveries before queuing them).
        func count(accepting sender: SenderKey, checkSender: Bool) -> Int {
            records.count { $0._withUnsafeGuaranteedRef { $0.accepts(sender, checkSender: checkSender) } }
        }

        /// ``DeliveryLane/append(_:to:sender:checkSender:ticket:)`` for this group's records.
        func append(_ box: NotificationBox, sender: SenderKey, checkSender: Bool, ticket: SyncTicket?) -> Bool {
            lane._withUnsafeGuaranteedRef { $0.append(box, to: records, sender: sender, checkSender: checkSender, ticket: ticket) }
        }

        /// Ends the group's observations (their loop shut down).
        func endRecords() {
            for record in records { record.takeUnretainedValue().end() }
        }
    }

    let name: Notification.Name
    /// Every observation of `name` (named ones and any-name ones), in registration order.
    let records: [ObserverRecord]
    /// `records` grouped by lane, lanes in order of first appearance.
    let lanes: [LaneGroup]
    /// Whether any of them filters on the sender (otherwise the sender is never looked at).
    let filtersSender: Bool

    init(name: Notification.Name, named: [ObserverRecord], anyName: [ObserverRecord]) {
        var merged: [ObserverRecord] = []
        merged.reserveCapacity(named.count + anyName.count)
        var i = 0, j = 0
        while i < named.count || j < anyName.count {
            if j == anyName.count || (i < named.count && named[i].sequence < anyName[j].sequence) {
                merged.append(named[i]); i += 1
            } else {
                merged.append(anyName[j]); j += 1
            }
        }
        var groups: [LaneGroup] = []
        for record in merged where !groups.contains(where: { $0.lane.toOpaque() == Unmanaged.passUnretained(record.lane).toOpaque() }) {
            let ofLane = merged.filter { $0.lane === record.lane }.map { Unmanaged.passUnretained($0) }
            groups.append(LaneGroup(lane: .passUnretained(record.lane), records: ofLane))
        }
        self.name = name
        self.records = merged
        self.lanes = groups
        self.filtersSender = merged.contains { if case .any = $0.sender { false } else { true } }
    }
}
