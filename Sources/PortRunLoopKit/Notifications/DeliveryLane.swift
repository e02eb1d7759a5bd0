import DequeModule
import Foundation
import Logging
import Synchronization

/// One queued delivery: a notification for one observation.
///
/// The record is held unretained: its lane pins it (``DeliveryLane``, "Pins") from the moment the
/// entry is appended until the drain that delivers it has finished, so neither the poster nor the
/// loop thread touches the record's reference count per notification — a retain on one CPU and a
/// release on the other would move the record's header between them on every post.
struct LaneEntry: Sendable {
    let box: NotificationBox
    let record: Unmanaged<ObserverRecord>
    /// Set when the entry belongs to a ``ThreadNotificationCenter/postAndWait(_:timeout:)``.
    let ticket: SyncTicket?

    init(box: NotificationBox, record: Unmanaged<ObserverRecord>, ticket: SyncTicket?) {
        self.box = box
        self.record = record
        self.ticket = ticket
    }

    /// An entry for `record`, which the caller keeps alive until the entry is appended (pinned).
    init(box: NotificationBox, record: ObserverRecord, ticket: SyncTicket?) {
        self.init(box: box, record: .passUnretained(record), ticket: ticket)
    }
}

/// The cross-thread part of one thread's ``ThreadNotificationQueue`` for one set of run-loop modes:
/// a FIFO of deliveries, and the doorbell discipline that wakes the loop once per batch.
///
/// Producers (any thread) append under the lane's lock; the first producer that finds no drain
/// pending schedules one on the loop (a `perform` in the lane's modes) — everyone else only appends,
/// so a burst of posts costs one queued drain and, through the loop's parked flag, at most one wake.
/// An asynchronous drain (loop thread) takes everything queued under one lock into the lane's owner
/// buffer and delivers from there without locking per entry (a lock per entry would bounce the
/// lock's cache line between the posting and the delivering CPU on every notification). Before it
/// calls a handler with entries left behind it makes sure a drain is pending, and every drain
/// delivers the owner buffer before anything newer, so a handler that runs the loop nested finds the
/// rest still in order.
///
/// Synchronous posts add a ``LaneSyncCall`` (a synchronous-call work item) that drains the lane up to
/// and including its own entries: such work also runs while the loop's thread is itself waiting in
/// `performAndWait`/`postAndWait`, which is what breaks post-and-wait cycles.
///
/// If the loop shuts down, the drain it discards takes the lane down with it (``kill()``): queued
/// entries are discarded and counted, later appends are refused.
///
/// **Pins.** Entries do not retain their records. Instead, the first entry of a record in each batch
/// retains it into `State.pins` (a record remembers, in `pinnedBatch`, the batch it was last pinned
/// in; `batch` moves on whenever the pins are handed over). An asynchronous drain takes the pins with
/// the entries and releases them when it returns: by then it has delivered its whole owner buffer
/// (or discarded it, if the lane died), and a drain nested in one of its handlers returns before it
/// does. A synchronous drain takes the pins when it empties the queue, and holds its own reference
/// to the record it is delivering (a nested drain may release the pins meanwhile). So a record
/// lives at least as long as any entry that names it, with one retain and one release per record
/// per batch instead of one per notification.
///
/// Thread-safety: `@unchecked Sendable`; `state` is guarded by its mutex; drains run on the loop's
/// thread only.
final class DeliveryLane: @unchecked Sendable {
    let loop: PortRunLoop
    let modes: ModeSet
    private let counters: QueueCounters

    private struct State: ~Copyable {
        var entries = HandoffQueue<LaneEntry>()
        /// The records the entries name (see "Pins"), each once per batch.
        var pins: [ObserverRecord] = []
        /// The current batch; compared with ``ObserverRecord/pinnedBatch``. Starts at 1 (a new record
        /// holds 0).
        var batch: UInt64 = 1
        var drainPending = false
        var isDead = false
        /// A pile-up was reported and the queue has not been drained below half the threshold since.
        var pileUpWarned = false

        /// Retains `record` for the entries about to name it, once per batch.
        @inline(__always) mutating func pin(_ record: Unmanaged<ObserverRecord>) {
            let batch = self.batch
            let isPinned = record._withUnsafeGuaranteedRef { record in
                guard record.pinnedBatch != batch else { return true }
                record.pinnedBatch = batch
                return false
            }
            if !isPinned { pins.append(record.takeUnretainedValue()) }
        }

        /// Hands the pins over to the caller (who releases them once the entries they cover are
        /// delivered or discarded) and starts a new batch.
        mutating func takePins(into other: inout [ObserverRecord]) {
            batch &+= 1
            guard !pins.isEmpty else { return }
            if other.isEmpty { swap(&other, &pins) } else { other.append(contentsOf: pins); pins.removeAll() }
        }
    }

    private let state = TracedMutex(State())

    /// Entries an asynchronous drain took and has not delivered yet (oldest first). Loop thread only
    /// (hence no dynamic exclusivity check).
    @exclusivity(unchecked) private var ownerBuffer = HandoffQueue<LaneEntry>()
    /// Counts drains started (loop thread only): a batch that made sure a drain was pending knows
    /// a nested drain consumed that one when this moved.
    @exclusivity(unchecked) private var drainsStarted = 0
    /// An empty array with capacity that drains take their pins into and give back: pins rotate
    /// between the queue and the drains without an allocation per batch. Loop thread only.
    @exclusivity(unchecked) private var sparePins: [ObserverRecord] = []

    /// Where notifications discarded by a shut-down loop are logged (the center's logger).
    private let logger: Logger
    /// The most entries the cross-thread queue holds (``ThreadNotificationCenter/queuedDeliveryLimit``;
    /// `Int.max` without one).
    private let limit: Int
    /// Entries refused because the queue was at its limit, ever (for aggregated logging).
    private let overflowed = Atomic<Int>(0)

    init(loop: PortRunLoop, modes: ModeSet, counters: QueueCounters, logger: Logger, limit: Int?) {
        self.loop = loop
        self.modes = modes
        self.counters = counters
        self.logger = logger
        self.limit = limit ?? .max
    }

    /// With the lane's lock held, after appending: true when the queue just reached
    /// ``ThreadNotificationCenter/pileUpWarningThreshold`` (once per pile-up; a drain that takes
    /// the queue below half of it re-arms the warning).
    @inline(__always) private static func pileUpReached(_ state: inout State) -> Bool {
        guard !state.pileUpWarned, state.entries.count >= ThreadNotificationCenter.pileUpWarningThreshold else { return false }
        state.pileUpWarned = true
        return true
    }

    /// Logs a pile-up (a rare path: once per pile-up).
    private func warnPileUp() {
        logger.warning("Notifications are piling up for a thread whose loop does not drain them (is it running in the observations' modes?)", metadata: [
            LogKey.loop: "\(loop.name)", LogKey.queued: "\(ThreadNotificationCenter.pileUpWarningThreshold)",
        ])
    }

    /// Counts `count` entries refused at the limit and logs the first refusal, then one entry per
    /// 1,024 (a rare path: a thread whose loop does not keep up, or never runs).
    private func overflow(_ count: Int) {
        guard count > 0 else { return }
        counters.didRejectAtOnce(count)
        let before = overflowed.add(count, ordering: .relaxed).oldValue
        guard before == 0 || before / 1024 != (before + count) / 1024 else { return }
        logger.warning("Notifications for a thread whose loop does not drain them reached the limit; further ones are discarded", metadata: [
            LogKey.loop: "\(loop.name)", LogKey.discarded: "\(before + count)", LogKey.queueLimit: "\(limit)",
        ])
    }

    /// Logs `count` notifications discarded because the loop shut down (a rare path: once per
    /// discarded batch, never per notification).
    private func logDiscarded(_ count: Int) {
        guard count > 0 else { return }
        logger.notice("PortRunLoop shut down with notifications queued for it; they were discarded", metadata: [
            LogKey.loop: "\(loop.name)", LogKey.discarded: "\(count)",
        ])
    }

    /// The one way notifications enter a lane (``ThreadNotificationCenter``'s posting path, for
    /// `post`, `postAndWait` and Foundation observers alike): appends one entry for each record of
    /// `records` that matches `sender`, in order, under one lock, without building an array.
    ///
    /// Without a ticket (asynchronous) it makes sure a drain is queued. With one (a synchronous
    /// post, which counted the matching records into `ticket.remainingInLane` beforehand) the entries
    /// carry the ticket and a ``LaneSyncCall`` is queued behind them; entries refused (the lane is
    /// dead, or at its limit) are settled at once.
    ///
    /// Returns false when the lane is dead or the loop refused the work because it shut down (the
    /// caller then ends the records; the entries were counted as discarded).
    func append(_ box: NotificationBox, to records: [Unmanaged<ObserverRecord>], sender: SenderKey,
                checkSender: Bool, ticket: SyncTicket? = nil) -> Bool {
        func accepts(_ record: Unmanaged<ObserverRecord>) -> Bool {
            record._withUnsafeGuaranteedRef { $0.accepts(sender, checkSender: checkSender) }
        }
        var rejected = 0
        var overflowCount = 0
        var pileUp = false
        defer { if pileUp { warnPileUp() } }
        let after = state.withLock { state -> AfterAppend? in // nil: queue the synchronous call
            if state.isDead {
                rejected = records.count(where: accepts)
                return .dead
            }
            // No `record.isActive` here: it reads the record's gate, whose word the loop's thread
            // writes on every delivery, so checking it per post would bounce that cache line
            // between the two CPUs. An observation that ended is skipped (and counted as
            // discarded) at delivery by that same gate; ended ones leave the plan right away.
            var appended = 0
            for record in records where accepts(record) {
                if state.entries.count >= limit {
                    overflowCount += 1
                    continue
                }
                state.pin(record)
                state.entries.append(LaneEntry(box: box, record: record, ticket: ticket))
                appended += 1
            }
            ticket?.remainingInLane = appended // guarded by this lock
            guard appended > 0 else { return .done }
            counters.didEnqueue(appended)
            pileUp = Self.pileUpReached(&state)
            if ticket != nil { return nil }
            return ensureDrainQueuedLocked(&state)
        }
        overflow(overflowCount)
        if let ticket, rejected + overflowCount > 0 { ticket.post.entriesFinished(count: rejected + overflowCount) }
        guard let after else {
            let call = LaneSyncCall(lane: self, ticket: ticket!)
            guard loop.enqueue(QueuedWork(modes: modes, kind: .call(call))) else {
                kill()
                return false
            }
            return true
        }
        if rejected > 0 { counters.didRejectAtOnce(rejected) }
        return complete(after)
    }

    /// What an append (or a drain) made under the lane's lock leaves to do after unlocking.
    private enum AfterAppend { case done, ring, refused, dead }

    /// With the lane's lock held: makes sure one drain is queued on the loop in the lane's modes
    /// (`drainPending`). Returns `.ring` when the caller must ring the loop's doorbell after
    /// unlocking, `.refused` when the loop is shut down (the caller kills the lane after unlocking).
    ///
    /// Queued under the lane's lock: a later append that finds the drain pending returns at once,
    /// so the drain must already be on the loop's queue by then — otherwise a RunLoopThread.stop()
    /// or a thread exit in between could discard it (and the notification with it) although that
    /// post returned first. The drain is a ``LaneDrain``: a loop that shuts down before running it
    /// fails it, which kills the lane.
    private func ensureDrainQueuedLocked(_ state: inout State) -> AfterAppend {
        guard !state.drainPending else { return .done }
        state.drainPending = true
        counters.didScheduleDrain()
        let (accepted, ring) = loop.enqueueDeferringDoorbell(QueuedWork(modes: modes, kind: .call(LaneDrain(lane: self))))
        guard accepted else { return .refused } // the caller kills the lane after unlocking
        return ring ? .ring : .done
    }

    /// After unlocking: rings the doorbell or kills the lane as `after` says. False when the lane
    /// is dead (or was just killed).
    private func complete(_ after: AfterAppend) -> Bool {
        switch after {
        case .done: return true
        case .ring: loop.ringDoorbell(); return true
        case .refused: kill(); return false
        case .dead: return false
        }
    }

    /// Loop thread. Delivers entries oldest first: with no ticket, what the owner buffer holds and
    /// everything queued on entry (a drain is pending for later arrivals); with a ticket, until that
    /// post's entries are all out.
    func drain(until ticket: SyncTicket?) {
        drainsStarted &+= 1
        guard ticket == nil else { return drainOneByOne(until: ticket) }
        var pins: [ObserverRecord] = [] // released when this drain returns (see "Pins")
        swap(&pins, &sparePins)
        defer { releasePins(&pins) }
        let taken = state.withLock { state -> Int in
            state.drainPending = false
            let count = state.entries.count
            guard count > 0 else { return 0 }
            ownerBuffer.append(movingContentsOf: &state.entries)
            state.pileUpWarned = false
            state.takePins(into: &pins)
            return count
        }
        if taken > 0 { counters.didDequeue(taken) }
        var pendingFor: Int? // the `drainsStarted` value when this drain last made sure of a pending drain
        while !ownerBuffer.isEmpty {
            let entry = ownerBuffer.popFirst()
            if !ownerBuffer.isEmpty && pendingFor != drainsStarted {
                guard ensureDrainPending() else {
                    // The loop shut down under us: what is left can never be delivered, and must
                    // not outlive the pins this drain is about to release.
                    logDiscarded(1 + ownerBuffer.count)
                    discard(entry)
                    discardOwnerBuffer()
                    return
                }
                pendingFor = drainsStarted
            }
            if let ticket = entry.ticket {
                state.withLock { _ in ticket.remainingInLane -= 1 } // guarded by the lane's lock
            }
            deliver(entry)
        }
    }

    /// Loop thread: releases a drain's pins (taken from `sparePins` when the drain started) and keeps
    /// the array's storage for the next drain.
    private func releasePins(_ pins: inout [ObserverRecord]) {
        pins.removeAll(keepingCapacity: true)
        swap(&pins, &sparePins)
    }

    /// Loop thread, the lane is dead: discards what the owner buffer holds (counted, synchronous
    /// posts settled).
    private func discardOwnerBuffer() {
        while !ownerBuffer.isEmpty { discard(ownerBuffer.popFirst()) }
    }

    /// Loop thread: counts `entry` as discarded without calling its handler, and settles its
    /// synchronous post.
    private func discard(_ entry: LaneEntry) {
        counters.didDiscard()
        if let ticket = entry.ticket { settleUndelivered(ticket) }
    }

    /// Any thread, the lane's lock not held: one entry of `ticket`'s synchronous post left this
    /// lane without a delivery.
    private func settleUndelivered(_ ticket: SyncTicket) {
        state.withLock { _ in ticket.remainingInLane -= 1 } // guarded by the lane's lock
        ticket.post.entriesFinished(count: 1)
    }

    /// Loop thread, owner buffer not empty: makes sure a drain is queued, so that a handler that runs
    /// the loop nested continues with the rest. False when the loop refused it (the lane was killed).
    private func ensureDrainPending() -> Bool {
        complete(state.withLock { ensureDrainQueuedLocked(&$0) })
    }

    /// A synchronous post's drain: the owner buffer first, then one entry at a time under the lock,
    /// until `ticket`'s entries are all out.
    ///
    /// An entry taken from the queue is pinned only by the queue's pins, which a drain nested in its
    /// handler may take and release: the record is retained here while it is delivered.
    private func drainOneByOne(until ticket: SyncTicket?) {
        var pins: [ObserverRecord] = [] // taken when this drain empties the queue; released on return
        swap(&pins, &sparePins)
        defer { releasePins(&pins) }
        while true {
            let next = state.withLock { state -> (entry: LaneEntry, after: AfterAppend)? in
                if let ticket, ticket.remainingInLane == 0 { return nil }
                let entry: LaneEntry
                if !ownerBuffer.isEmpty {
                    entry = ownerBuffer.popFirst()
                } else {
                    guard !state.entries.isEmpty else { return nil }
                    entry = state.entries.popFirst()
                    counters.didDequeue()
                    if state.entries.isEmpty { state.takePins(into: &pins) }
                }
                entry.ticket?.remainingInLane -= 1
                // Entries left behind: a nested run must find a drain to continue with.
                guard !(ownerBuffer.isEmpty && state.entries.isEmpty) else { return (entry, .done) }
                return (entry, ensureDrainQueuedLocked(&state))
            }
            guard let next else { return }
            _ = complete(next.after)
            let record = next.entry.record.takeUnretainedValue() // a strong reference for the delivery
            withExtendedLifetime(record) { deliver(next.entry) }
        }
    }

    private func deliver(_ entry: LaneEntry) {
        guard let ticket = entry.ticket else {
            // Unretained: a pin or the synchronous drain keeps the record alive (see "Pins"), and
            // a retain here would write the record's header on every delivery.
            let delivered = entry.record._withUnsafeGuaranteedRef { $0.deliver(entry.box, restoringContext: true) }
            if delivered { counters.didDeliver() } else { counters.didDiscard() }
            return
        }
        let post = ticket.post
        guard post.beginDelivery() else {
            counters.didDiscard()
            post.entriesFinished(count: 1)
            return
        }
        let delivered = entry.record._withUnsafeGuaranteedRef { $0.deliver(entry.box, restoringContext: true) }
        if delivered { counters.didDeliver() } else { counters.didDiscard() }
        post.deliveryFinished(delivered: delivered)
    }

    /// The loop shut down: discards every entry (counted), refuses later appends, and settles the
    /// synchronous posts waiting on them. Idempotent.
    func kill() {
        var pins: [ObserverRecord] = []
        var dropped = state.withLock { state -> HandoffQueue<LaneEntry> in
            state.isDead = true
            var dropped = HandoffQueue<LaneEntry>()
            dropped.swap(with: &state.entries)
            state.takePins(into: &pins)
            counters.didDequeue(dropped.count)
            return dropped
        }
        counters.didDiscard(dropped.count)
        logDiscarded(dropped.count)
        // Settled and released outside the lock: releasing a notification may run arbitrary deinits.
        while !dropped.isEmpty {
            if let ticket = dropped.popFirst().ticket { settleUndelivered(ticket) }
        }
        withExtendedLifetime(pins) {}
    }
}

/// A lane's asynchronous drain, queued on its loop in the lane's modes. Not served while the loop's
/// thread waits in a blocking call (asynchronous deliveries wait until it returns). If the loop
/// shuts down before running it, ``fail(_:)`` kills the lane, so nothing waits forever.
///
/// Thread-safety: `Sendable`; immutable.
final class LaneDrain: QueuedCall, Sendable {
    private let lane: DeliveryLane

    init(lane: DeliveryLane) { self.lane = lane }

    var servedWhileWaiting: Bool { false }

    func run() { lane.drain(until: nil) }

    func fail(_ error: PortRunLoopError) { lane.kill() }
}
