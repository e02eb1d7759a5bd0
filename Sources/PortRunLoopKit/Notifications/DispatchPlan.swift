import Foundation

/// What posting one notification name does, worked out once per change of the center's
/// observations instead of once per post: the matching observations in registration order, and
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

        /// ``DeliveryLane/appendPost(_:to:sender:checkSender:)`` for this group's records.
        func appendPost(_ box: NotificationBox, sender: SenderKey, checkSender: Bool) -> Bool {
            lane._withUnsafeGuaranteedRef { $0.appendPost(box, to: records, sender: sender, checkSender: checkSender) }
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

    /// The observations a post from `sender` is for right now, in registration order.
    func matching(_ sender: SenderKey) -> [ObserverRecord] {
        records.filter { $0.isActive && $0.accepts(sender, checkSender: filtersSender) }
    }
}
