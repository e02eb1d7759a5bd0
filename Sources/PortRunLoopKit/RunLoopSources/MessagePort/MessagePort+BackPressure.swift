import Foundation
import Synchronization

extension MessagePort {
    /// With the lock held and the queue full: waits until there is room, the port is invalidated or
    /// `date` passes. Returns true when there is room.
    ///
    /// On a loop's thread the wait is registered in ``BlockingWaits``: a wait that closes a cycle of
    /// loops blocked on each other (this loop's own port full, waited on by the port's loop) can
    /// never end, and gives up at once instead.
    func waitForRoom(until date: Date) -> Bool {
        let deadline = date.monotonicDeadline
        guard deadline > System.monotonicSeconds() else { return false }
        var blockingWait: BlockingWait?
        // Room comes from the loop the port is in, once the loop it is leaving (if any) let go.
        let targets = [state.leaving, state.loop].compactMap { $0 }
        if !targets.isEmpty, let waiter = PortRunLoop.existingForCurrentThread() {
            blockingWait = BlockingWaits.shared.enter(waiter, on: targets, isSend: true) { [self] in
                roomGeneration.add(1, ordering: .releasing)
                ParkingLot.wakeAll(key: roomKey)
            }
            guard blockingWait != nil else { return false }
        }
        defer { if let blockingWait { BlockingWaits.shared.leave(blockingWait) } }
        state.spaceWaiters += 1
        defer { state.spaceWaiters -= 1 }
        while state.isValid && state.queue.count >= state.limit && !(blockingWait?.isBroken ?? false) {
            let seen = roomGeneration.load(ordering: .acquiring)
            unlock()
            // A broken wait is woken through the parking lot after the flag is set: checked in the
            // predicate too, it cannot be missed between the outer check and the sleep.
            let changed = ParkingLot.park(key: roomKey, deadline: deadline) {
                roomGeneration.load(ordering: .acquiring) != seen || (blockingWait?.isBroken ?? false)
            }
            lock()
            if !changed { break }
        }
        return state.isValid && state.queue.count < state.limit
    }

    /// With the lock held: tells senders waiting for room to look again. Lock order: the state's
    /// lock, then the parking-lot slot (a waiter never takes the state's lock while parked).
    func notifyRoomChanged() {
        roomGeneration.add(1, ordering: .releasing)
        ParkingLot.wakeAll(key: roomKey)
    }
}
