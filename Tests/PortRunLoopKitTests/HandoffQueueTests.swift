import Foundation
@testable import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// HandoffQueue: the FIFO buffer behind MessagePort's hand-off (order, swaps, moves, growth,
/// compaction, and that every element is released exactly once).
@Suite(.timeLimit(.minutes(1))) struct HandoffQueueTests {
    /// Counts live instances, to check that the queue neither leaks nor double-frees elements.
    final class Tracked {
        static let live = Locked(0)
        let value: Int
        init(_ value: Int) { self.value = value; Self.live.withLock { $0 += 1 } }
        deinit { Self.live.withLock { $0 -= 1 } }
    }

    @Test func popsInAppendOrderAcrossGrowthAndRewinds() {
        var queue = HandoffQueue<Int>()
        var expected = 0
        var next = 0
        // Interleave appends and pops so the buffer grows, empties (rewinds to 0) and compacts.
        for round in 1...200 {
            for _ in 0..<(round % 37 + 1) { queue.append(next); next += 1 }
            for _ in 0..<(round % 23 + 1) where !queue.isEmpty {
                let popped = queue.popFirst(); #expect(popped == expected)
                expected += 1
            }
            let count = queue.count; #expect(count == next - expected)
        }
        while !queue.isEmpty { let popped = queue.popFirst(); #expect(popped == expected); expected += 1 }
        #expect(expected == next)
    }

    @Test func swapExchangesContentsAndMovesPreserveOrder() {
        var a = HandoffQueue<Int>()
        var b = HandoffQueue<Int>()
        for i in 0..<5 { a.append(i) }
        for i in 10..<13 { b.append(i) }
        a.swap(with: &b)
        let counts = (a.count, b.count); #expect(counts == (3, 5))
        // Append-moving into a non-empty queue keeps both orders; the source ends empty.
        a.append(movingContentsOf: &b)
        let bIsEmpty = b.isEmpty; #expect(bIsEmpty)
        var drained: [Int] = []
        while !a.isEmpty { drained.append(a.popFirst()) }
        #expect(drained == [10, 11, 12, 0, 1, 2, 3, 4])
        // Prepend puts the other queue's elements in front, in order.
        for i in 0..<3 { a.append(i) }
        _ = a.popFirst() // a live range that does not start at 0
        for i in 7..<9 { b.append(i) }
        a.prepend(movingContentsOf: &b)
        drained = []
        while !a.isEmpty { drained.append(a.popFirst()) }
        #expect(drained == [7, 8, 1, 2])
        let bEmptied = b.isEmpty; #expect(bEmptied)
    }

    @Test func everyElementIsReleasedExactlyOnce() {
        let before = Tracked.live.withLock { $0 }
        do {
            var queue = HandoffQueue<Tracked>()
            var other = HandoffQueue<Tracked>()
            for i in 0..<1000 { queue.append(Tracked(i)) }
            for _ in 0..<400 { _ = queue.popFirst() }       // popped ones are released by the caller
            for i in 0..<50 { other.append(Tracked(i)) }
            queue.append(movingContentsOf: &other)
            queue.removeAll()                                 // releases what is left
            let emptied = queue.isEmpty; #expect(emptied)
            for i in 0..<10 { queue.append(Tracked(i)) }      // reused after removeAll
            #expect(Tracked.live.withLock { $0 } == before + 10)
        } // deinit releases the last 10
        #expect(Tracked.live.withLock { $0 } == before)
    }

    /// Its own live count (tests run in parallel with the one above).
    final class Carried {
        static let live = Locked(0)
        init() { Self.live.withLock { $0 += 1 } }
        deinit { Self.live.withLock { $0 -= 1 } }
    }

    /// `popFirstTrivially` takes a first element only when the reader answers for it (a pure
    /// signal: no reference), and leaves every other one where it is, for `popFirst`.
    @Test func popFirstTriviallyTakesOnlyElementsWithoutReferences() {
        let before = Carried.live.withLock { $0 }
        do {
            var queue = HandoffQueue<(id: Int, carried: Carried?)>()
            for i in 0..<40 { queue.append((i, i % 4 == 0 ? Carried() : nil)) }
            var order: [Int] = []
            while !queue.isEmpty {
                if let id = queue.popFirstTrivially({ $0.carried == nil ? $0.id : nil }) {
                    order.append(id)
                } else {
                    let element = queue.popFirst()
                    #expect(element.carried != nil, "only an element with a reference is left for popFirst")
                    order.append(element.id)
                }
            }
            #expect(order == Array(0..<40))
        }
        #expect(Carried.live.withLock { $0 } == before, "each carried reference released once")
    }

    /// `putBackFirst` undoes a `popFirst`: in the middle of the queue, and when the pop emptied it.
    @Test func putBackFirstRestoresThePoppedElementInFront() {
        var queue = HandoffQueue<Int>()
        for i in 0..<5 { queue.append(i) }
        _ = queue.popFirst()                 // a live range that does not start at 0
        let taken = queue.popFirst()
        queue.putBackFirst(taken)
        var drained: [Int] = []
        while !queue.isEmpty { drained.append(queue.popFirst()) }
        #expect(drained == [1, 2, 3, 4])
        queue.append(9)
        let only = queue.popFirst()          // empties the queue, which rewinds to 0
        queue.putBackFirst(only)
        let counts = (queue.count, queue.popFirst()); #expect(counts == (1, 9))
    }

    /// Used as a stack (a loop's ports in delivery): `popLast` takes the newest element, and
    /// `element(atOffset:)` reads any without removing it, also when the live range does not start
    /// at 0 and after the storage grew; each element is released once.
    @Test func popLastAndElementAtOffsetServeAsAStack() {
        let before = Carried.live.withLock { $0 }
        do {
            var stack = HandoffQueue<(id: Int, carried: Carried)>()
            stack.append((-1, Carried()))
            _ = stack.popFirst()                      // rewinds: empty again
            for i in 0..<40 { stack.append((i, Carried())) } // grows past the first storage
            let read = (0..<40).map { stack.element(atOffset: $0).id }
            #expect(read == Array(0..<40))
            var popped: [Int] = []
            while stack.count > 10 { popped.append(stack.popLast().id) }
            #expect(popped == Array((10..<40).reversed()))
            _ = stack.popFirst()                      // a live range that starts at 1
            let rest = (stack.element(atOffset: 0).id, stack.element(atOffset: 8).id, stack.count)
            #expect(rest == (1, 9, 9))
            stack.append((99, Carried()))
            let top = stack.popLast().id; #expect(top == 99)
            while !stack.isEmpty { _ = stack.popLast() } // empties, rewinds
            stack.append((7, Carried()))
            let again = (stack.element(atOffset: 0).id, stack.count); #expect(again == (7, 1))
        }
        #expect(Carried.live.withLock { $0 } == before, "each element released once")
    }
}
