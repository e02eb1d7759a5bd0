import Foundation

extension MessagePort {
    /// With the lock held and the queue full: waits until there is room, the port is invalidated or
    /// `date` passes. Returns true when there is room.
    ///
    /// Each look that finds the queue full lists a ``StateChangeWait`` in the state and waits for it
    /// in the one blocking wait (``BlockingCall``), as a send: the thread serves nothing of its own
    /// loop meanwhile (M9), and on a loop's thread the wait is registered in ``BlockingWaits``, so a
    /// wait that closes a cycle of loops blocked on each other (this loop's own port full, waited
    /// on by the port's loop) gives up at once instead of never ending.
    func waitForRoom(until date: Date) -> Bool {
        let deadline = date.monotonicDeadline
        guard deadline > System.monotonicSeconds() else { return false }
        let waiter = PortRunLoop.existingForCurrentThread()
        while state.isValid && state.queue.count >= state.limit {
            // Room comes from the loop the port is in, once the loop it is leaving (if any) let go.
            let targets = [state.leaving, state.loop].compactMap { $0 }
            let wait = StateChangeWait(waiter: waiter, serving: nil)
            state.roomWaits.add(wait)
            unlock()
            let unbroken = wait.waitUntilComplete(deadline: deadline, on: targets, isSend: true)
            lock()
            state.roomWaits.remove(wait) // still listed after its deadline or a broken wait
            if !unbroken || System.monotonicSeconds() >= deadline { break }
        }
        return state.isValid && state.queue.count < state.limit
    }

    /// With the lock held: tells senders waiting for room to look again. Lock order: the state's
    /// lock, then the parking-lot slot (a waiter never takes the state's lock while it sleeps).
    func notifyRoomChanged() { state.roomWaits.completeAll() }
}
