@testable import PortRunLoopKit
import Testing

/// PendingRequests: a connection's waiting requests, the first in a slot of its own and the rest
/// in a dictionary; every request is found by its id, whichever place it is in, until removed.
@Suite(.timeLimit(.minutes(1))) struct PendingRequestsTests {
    @Test func findsEachRequestByIdUntilItIsRemoved() {
        var pending = PendingRequests()
        let waits = (0..<5).map { _ in ReplyWait(waiter: nil, connection: nil) }
        for (index, wait) in waits.enumerated() { pending.insert(wait, id: UInt64(index + 1)) }
        for (index, wait) in waits.enumerated() { #expect(pending[id: UInt64(index + 1)] === wait) }
        #expect(pending[id: 6] == nil)
        // Out of order: the slot's request first, then one from the dictionary.
        pending.remove(1)
        #expect(pending[id: 1] == nil)
        pending.remove(4)
        #expect(pending[id: 4] == nil)
        for id in [2, 3, 5] as [UInt64] { #expect(pending[id: id] === waits[Int(id) - 1]) }
        // The slot is free again: a new request takes it, and the others are still found.
        let later = ReplyWait(waiter: nil, connection: nil)
        pending.insert(later, id: 7)
        #expect(pending[id: 7] === later)
        for id in [2, 3, 5] as [UInt64] { #expect(pending[id: id] === waits[Int(id) - 1]) }
    }

    @Test func visitsEveryWaitingRequestOnce() {
        var pending = PendingRequests()
        let waits = (0..<4).map { _ in ReplyWait(waiter: nil, connection: nil) }
        for (index, wait) in waits.enumerated() { pending.insert(wait, id: UInt64(index + 1)) }
        pending.remove(2)
        var seen: [ObjectIdentifier] = []
        pending.forEach { seen.append(ObjectIdentifier($0)) }
        #expect(Set(seen) == Set([waits[0], waits[2], waits[3]].map(ObjectIdentifier.init)))
        #expect(seen.count == 3)
    }

    @Test func removingAnUnknownIdChangesNothing() {
        var pending = PendingRequests()
        let wait = ReplyWait(waiter: nil, connection: nil)
        pending.insert(wait, id: 1)
        pending.remove(9)
        #expect(pending[id: 1] === wait)
        var count = 0
        pending.forEach { _ in count += 1 }
        #expect(count == 1)
    }
}
