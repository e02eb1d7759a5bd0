/// A binary min-heap of timers ordered by (due time, sequence number): insert, remove
/// and re-arm in O(log n), the next timer in O(1) (libuv's `src/timer.c` keeps its timers the same
/// way). The sequence number is taken from the loop each time a timer is scheduled, so timers due
/// at the same moment fire in the order they were scheduled.
///
/// Each timer is in at most one heap (its ``SourceGroup``'s) and remembers its index there,
/// which is what makes removal O(log n) instead of a search.
///
/// Thread-safety: the loop's thread only.
struct TimerHeap {
    private var items: [RunLoopTimer] = []

    var isEmpty: Bool { items.isEmpty }
    var count: Int { items.count }
    /// The timer due first.
    var first: RunLoopTimer? { items.first }

    /// When the loop must wake for these timers: the first timer's date plus its tolerance, but no
    /// later than the second-earliest date (which is one of the root's children). So each timer
    /// fires between its date and its date plus its tolerance, and a timer with a tolerance lets
    /// the loop sleep on until the next timer is due, then fires with it: coalescing in O(1).
    var wake: Double {
        guard let first = items.first else { return .infinity }
        var wake = first.due + first.slack
        if items.count > 1 { wake = min(wake, items[1].due) }
        if items.count > 2 { wake = min(wake, items[2].due) }
        return wake
    }

    mutating func insert(_ timer: RunLoopTimer) {
        InternalFailure.check(timer.heapIndex < 0, "a timer was inserted into a heap twice")
        timer.heapIndex = items.count
        items.append(timer)
        siftUp(items.count - 1)
    }

    mutating func remove(_ timer: RunLoopTimer) {
        let index = timer.heapIndex
        guard index >= 0, index < items.count, items[index] === timer else { return }
        let last = items.count - 1
        if index != last {
            items.swapAt(index, last)
            items[index].heapIndex = index
        }
        items.removeLast()
        timer.heapIndex = -1
        if index < items.count {
            siftDown(index)
            siftUp(index)
        }
    }

    /// Forgets every timer (at shutdown), resetting their indexes.
    mutating func removeAll() {
        for timer in items { timer.heapIndex = -1 }
        items.removeAll()
    }

    private static func precedes(_ a: RunLoopTimer, _ b: RunLoopTimer) -> Bool {
        a.due < b.due || (a.due == b.due && a.sequence < b.sequence)
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.precedes(items[child], items[parent]) else { break }
            items.swapAt(child, parent)
            items[child].heapIndex = child
            items[parent].heapIndex = parent
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < items.count else { break }
            let right = left + 1
            var smallest = left
            if right < items.count, Self.precedes(items[right], items[left]) { smallest = right }
            guard Self.precedes(items[smallest], items[parent]) else { break }
            items.swapAt(smallest, parent)
            items[smallest].heapIndex = smallest
            items[parent].heapIndex = parent
            parent = smallest
        }
    }
}
