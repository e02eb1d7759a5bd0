import Foundation
import Synchronization

/// One ``ThreadNotificationCenter/postAndWait(_:timeout:)`` in flight: counts the deliveries it
/// queued on other threads and completes when the last one is settled. The posting thread waits in
/// ``BlockingCall``'s wait loop (serving its own loop, if it has one: two threads that post-and-wait
/// to each other at the same moment each deliver the other's notification, and both return).
///
/// At the deadline, deliveries that have not started are withdrawn (they will never start; they are
/// counted as discarded where they were queued) and the wait continues only for deliveries already
/// running, so that when `postAndWait` returns or throws, no handler for the notification is running
/// or will start.
///
/// Thread-safety: `@unchecked Sendable`; `state` is guarded by its mutex.
final class SynchronousPost: BlockingCall, @unchecked Sendable {
    private struct State {
        var remaining: Int
        var inFlight = 0
        var withdrawn = false
        var delivered = 0

        var isDone: Bool { remaining == 0 || (withdrawn && inFlight == 0) }
    }

    private let state: TracedMutex<State>

    init(deliveries: Int, waiter: PortRunLoop?) {
        self.state = TracedMutex(State(remaining: deliveries))
        super.init(waiter: waiter)
    }

    /// A queued delivery is about to call its handler. False once the post was withdrawn (timed
    /// out): the delivery must then be skipped and settled with ``entriesFinished(count:)``.
    func beginDelivery() -> Bool {
        state.withLock { state in
            guard !state.withdrawn else { return false }
            state.inFlight += 1
            return true
        }
    }

    /// A delivery that began has finished.
    func deliveryFinished(delivered: Bool) {
        settle { state in
            state.inFlight -= 1
            state.remaining -= 1
            if delivered { state.delivered += 1 }
        }
    }

    /// `count` deliveries were settled without running (withdrawn, observation ended, loop gone).
    func entriesFinished(count: Int) {
        settle { $0.remaining -= count }
    }

    /// Withdraws the deliveries that have not started.
    override func deadlinePassed() {
        settle { $0.withdrawn = true }
    }

    private func settle(_ change: (inout State) -> Void) {
        let done = state.withLock { state -> Bool in
            change(&state)
            return state.isDone
        }
        if done { complete() }
    }

    /// Waits (see ``BlockingCall``) until every delivery settled, or the deadline withdrew the rest
    /// and the running ones finished. Returns the number of handler calls made; throws
    /// ``PortRunLoopError/timedOut`` when the deadline withdrew deliveries.
    func waitForCompletion(deadline: Double, on targets: [PortRunLoop]) throws(PortRunLoopError) -> Int {
        waitUntilComplete(deadline: deadline, on: targets)
        let (withdrawn, remaining, delivered) = state.withLock { ($0.withdrawn, $0.remaining, $0.delivered) }
        if withdrawn && remaining > 0 { throw .timedOut }
        return delivered
    }
}

/// A synchronous post's share of one lane: how many of its entries are still queued there.
///
/// Thread-safety: `@unchecked Sendable`; `remainingInLane` is guarded by the lane's lock.
final class SyncTicket: @unchecked Sendable {
    let post: SynchronousPost
    var remainingInLane: Int

    init(post: SynchronousPost, entries: Int) {
        self.post = post
        self.remainingInLane = entries
    }
}

/// The work item a synchronous post puts on a target loop next to its lane entries. It is a
/// synchronous call in the core's sense, so it runs in the lane's modes *and* while the target
/// thread itself waits in `.synchronousWait`; it drains the lane in order up to and including the
/// post's entries. If the loop shuts down first, the lane is killed and the post settled.
///
/// Thread-safety: `Sendable`; runs on the lane's loop thread.
final class LaneSyncCall: QueuedCall, Sendable {
    private let lane: DeliveryLane
    private let ticket: SyncTicket

    init(lane: DeliveryLane, ticket: SyncTicket) {
        self.lane = lane
        self.ticket = ticket
    }

    var servedWhileWaiting: Bool { true }

    func run() { lane.drain(until: ticket) }

    func fail(_ error: PortRunLoopError) { lane.kill() }
}
