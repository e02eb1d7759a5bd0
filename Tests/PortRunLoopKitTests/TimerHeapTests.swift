import Foundation
@testable import PortRunLoopKit
import Testing

/// The timer heap against a sorted-array model: random inserts, removals from the middle, pops and
/// re-schedules, checking after each step that the first timer is the model's and every index the
/// heap recorded is right.
@Suite struct TimerHeapTests {
    private func makeTimer(due: Double, sequence: UInt64) -> RunLoopTimer {
        let timer = RunLoopTimer(fireAt: .distantFuture) { _ in }
        timer.due = due
        timer.sequence = sequence
        return timer
    }

    @Test func agreesWithASortedModel() {
        var generator = SystemRandomNumberGenerator()
        var heap = TimerHeap()
        var model: [RunLoopTimer] = []
        var sequence: UInt64 = 0
        func key(_ r: RunLoopTimer) -> (Double, UInt64) { (r.due, r.sequence) }
        for step in 0..<20_000 {
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<5:
                // Few distinct due times, so equal dates (ordered by sequence) are common.
                let r = makeTimer(due: Double(Int.random(in: 0..<50, using: &generator)), sequence: sequence)
                sequence += 1
                heap.insert(r)
                model.append(r)
            case 5..<7 where !model.isEmpty:
                let r = model.remove(at: Int.random(in: 0..<model.count, using: &generator))
                heap.remove(r)
                #expect(r.heapIndex == -1)
            case 7..<9 where !model.isEmpty:
                let first = model.min { key($0) < key($1) }!
                #expect(heap.first === first, "step \(step): the heap's first timer is not the earliest")
                heap.remove(first)
                model.removeAll { $0 === first }
            case 9 where !model.isEmpty:
                // Re-schedule one (the loop removes and inserts with a new date and sequence).
                let r = model[Int.random(in: 0..<model.count, using: &generator)]
                heap.remove(r)
                r.due = Double(Int.random(in: 0..<50, using: &generator))
                r.sequence = sequence
                sequence += 1
                heap.insert(r)
            default:
                break
            }
            #expect(heap.count == model.count)
            if let earliest = model.min(by: { key($0) < key($1) }) {
                #expect(heap.first === earliest, "step \(step): the heap's first timer is not the earliest")
            }
        }
        // Draining yields the model's order exactly: by due time, then sequence.
        var drained: [(Double, UInt64)] = []
        while let first = heap.first {
            drained.append(key(first))
            heap.remove(first)
        }
        #expect(drained.elementsEqual(model.map(key).sorted { $0 < $1 }, by: { $0 == $1 }))
    }

    @Test func removingATimerThatIsNotInTheHeapDoesNothing() {
        var heap = TimerHeap()
        let inside = makeTimer(due: 1, sequence: 0)
        let outside = makeTimer(due: 0, sequence: 1)
        heap.insert(inside)
        heap.remove(outside)
        #expect(heap.count == 1)
        #expect(heap.first === inside)
    }
}
