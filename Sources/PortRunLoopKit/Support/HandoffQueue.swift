/// A first-in-first-out buffer made for handing a batch from producers to one consumer: producers
/// ``append(_:)`` under a lock, the consumer ``swap(with:)``s the whole buffer out under that lock
/// and then ``popFirst()``s it without any lock.
///
/// Why not `Deque`: on the delivery hot path every `Deque.removeFirst()` checks uniqueness (a
/// runtime call), wraps indices and writes its header; here a pop is one `move()` and one
/// increment. The live elements are `storage[head..<tail]`; a buffer emptied by pops rewinds to 0
/// so the producer's next appends reuse the same (already cached) memory, and it keeps its
/// capacity across swaps, so a steady stream allocates nothing.
///
/// Thread-safety: not thread-safe; each instance is guarded by its owner's lock, or owned by one
/// thread. Noncopyable, so two owners can never share the storage.
struct HandoffQueue<Element>: ~Copyable {
    private var storage: UnsafeMutablePointer<Element>?
    private var capacity = 0
    private var head = 0
    private var tail = 0

    init() {}

    deinit {
        if let storage {
            (storage + head).deinitialize(count: tail - head)
            storage.deallocate()
        }
    }

    /// Number of elements.
    var count: Int { tail &- head }

    /// Whether there are no elements.
    var isEmpty: Bool { tail == head }

    /// Whether an element can be appended without growing the storage (or moving the live ones).
    var hasRoomAtTail: Bool { tail < capacity }

    /// Appends `element` at the end (amortised O(1)).
    @inline(__always)
    mutating func append(_ element: consuming Element) {
        if tail == capacity { makeRoomAtTail(for: 1) }
        (storage.unsafelyUnwrapped + tail).initialize(to: element)
        tail &+= 1
    }

    /// Removes and returns the first element. Precondition: not empty.
    @inline(__always)
    mutating func popFirst() -> Element {
        InternalFailure.check(head < tail, "HandoffQueue.popFirst() on an empty queue")
        let element = (storage.unsafelyUnwrapped + head).move()
        head &+= 1
        if head == tail { head = 0; tail = 0 }
        return element
    }

    /// Puts `element` back in front: undoes the ``popFirst()`` that returned it, when no other
    /// change was made since. O(1): the slot it was moved out of is still free (or the queue is
    /// empty).
    @inline(__always)
    mutating func putBackFirst(_ element: consuming Element) {
        guard head > 0 else {
            InternalFailure.check(isEmpty, "HandoffQueue.putBackFirst() after a change other than popFirst()")
            append(element)
            return
        }
        head &-= 1
        (storage.unsafelyUnwrapped + head).initialize(to: element)
    }

    /// Removes and returns the last element: the queue used as a stack. Precondition: not empty.
    @inline(__always)
    mutating func popLast() -> Element {
        InternalFailure.check(head < tail, "HandoffQueue.popLast() on an empty queue")
        tail &-= 1
        let element = (storage.unsafelyUnwrapped + tail).move()
        if head == tail { head = 0; tail = 0 }
        return element
    }

    /// The element at `offset` (0 is the first). Precondition: `offset` is in range.
    @inline(__always)
    func element(atOffset offset: Int) -> Element {
        InternalFailure.check(offset >= 0 && offset < count, "HandoffQueue.element(atOffset:) out of range")
        return (storage.unsafelyUnwrapped + head + offset).pointee
    }

    /// Reads the first element in place; when `read` returns a value, the element is removed
    /// *without being deinitialized* and that value is returned, otherwise nothing changes and nil
    /// is returned. Precondition: not empty, and `read` answers only for an element that holds no
    /// reference (whose deinitialization would do nothing): for a hot path where even that
    /// nothing, a release of a nil reference, is a runtime call.
    @inline(__always)
    mutating func popFirstTrivially<Value>(_ read: (borrowing Element) -> Value?) -> Value? {
        InternalFailure.check(head < tail, "HandoffQueue.popFirstTrivially() on an empty queue")
        guard let value = read((storage.unsafelyUnwrapped + head).pointee) else { return nil }
        head &+= 1
        if head == tail { head = 0; tail = 0 }
        return value
    }

    /// The position (0 is the first element) of the first element that satisfies `predicate`.
    @inline(__always)
    func firstOffset(where predicate: (borrowing Element) -> Bool) -> Int? {
        guard let storage else { return nil }
        var index = head
        while index < tail {
            if predicate((storage + index).pointee) { return index - head }
            index &+= 1
        }
        return nil
    }

    /// How many elements satisfy `predicate`.
    func count(where predicate: (borrowing Element) -> Bool) -> Int {
        guard let storage else { return 0 }
        var matching = 0
        for index in head..<tail where predicate((storage + index).pointee) { matching += 1 }
        return matching
    }

    /// Whether an element satisfies `predicate`.
    func contains(where predicate: (borrowing Element) -> Bool) -> Bool {
        firstOffset(where: predicate) != nil
    }

    /// Removes and returns the element at `offset` (0 is the first); the later ones move up, in
    /// order. O(count - offset): made for the rare element taken out of turn.
    mutating func remove(atOffset offset: Int) -> Element {
        InternalFailure.check(offset >= 0 && offset < count, "HandoffQueue.remove(atOffset:) out of range")
        let position = storage.unsafelyUnwrapped + head + offset
        let element = position.move()
        position.moveInitialize(from: position + 1, count: tail - head - offset - 1)
        tail &-= 1
        if head == tail { head = 0; tail = 0 }
        return element
    }

    /// Removes every element and returns them in order, keeping the capacity.
    mutating func removeAllReturningElements() -> [Element] {
        var elements: [Element] = []
        elements.reserveCapacity(count)
        while !isEmpty { elements.append(popFirst()) }
        return elements
    }

    /// Exchanges the contents (and capacities) of two queues without touching the elements.
    @inline(__always)
    mutating func swap(with other: inout HandoffQueue<Element>) {
        Swift.swap(&storage, &other.storage)
        Swift.swap(&capacity, &other.capacity)
        Swift.swap(&head, &other.head)
        Swift.swap(&tail, &other.tail)
    }

    /// Removes every element, keeping the capacity.
    mutating func removeAll() {
        if let storage { (storage + head).deinitialize(count: tail - head) }
        head = 0
        tail = 0
    }

    /// Moves every element of `other` to the end of this queue, in order; `other` ends empty.
    ///
    /// Inlined: the usual case, this queue empty, is a swap of the two buffers, done where a batch
    /// changes hands (a loop collecting its inbox, taking a port's queue) rather than in a function
    /// of its own, one page of code more for a wake-up to touch. The copy is not inlined.
    @inline(__always)
    mutating func append(movingContentsOf other: inout HandoffQueue<Element>) {
        guard !other.isEmpty else { return }
        if isEmpty { swap(with: &other); return }
        appendMoving(&other)
    }

    /// ``append(movingContentsOf:)`` into a queue that is not empty.
    @inline(never)
    private mutating func appendMoving(_ other: inout HandoffQueue<Element>) {
        let moved = other.count
        if tail + moved > capacity { makeRoomAtTail(for: moved) }
        (storage.unsafelyUnwrapped + tail).moveInitialize(from: other.storage.unsafelyUnwrapped + other.head, count: moved)
        tail += moved
        other.head = 0
        other.tail = 0
    }

    /// Moves every element of `other` in front of this queue's, in order; `other` ends empty.
    mutating func prepend(movingContentsOf other: inout HandoffQueue<Element>) {
        other.append(movingContentsOf: &self)
        swap(with: &other)
    }

    /// Makes room for `extra` more elements at the tail: slides the live elements to the front
    /// when that frees enough (and at least half the buffer), otherwise reallocates at twice the
    /// size needed.
    private mutating func makeRoomAtTail(for extra: Int) {
        let live = tail - head
        if let storage, head > 0, live + extra <= capacity, head >= capacity / 2 {
            storage.moveInitialize(from: storage + head, count: live)
            head = 0
            tail = live
            return
        }
        let newCapacity = Swift.max(16, (live + extra) * 2)
        let newStorage = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
        if let storage {
            newStorage.moveInitialize(from: storage + head, count: live)
            storage.deallocate()
        }
        storage = newStorage
        capacity = newCapacity
        head = 0
        tail = live
    }
}
