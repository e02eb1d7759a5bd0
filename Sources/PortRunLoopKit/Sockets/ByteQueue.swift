/// Bytes in order, appended at one end and consumed from the other: a connection's outbound queue
/// (what a write could not hand to the kernel at once) and a stream pair's input buffer (what was
/// read and not yet taken). One contiguous allocation, kept while bytes come and go (a partial
/// write and the flush that follows allocate nothing once it exists) and let go when it drains
/// past ``retainedCapacity``, so an idle connection holds none.
///
/// Bytes are appended at the tail and consumed from the head; when the tail has no room, the
/// live bytes move to the front before the allocation grows (amortised O(1) per byte).
///
/// Thread-safety: its owner's loop thread only.
struct ByteQueue: ~Copyable {
    /// Capacity kept after a drain: room for one high-water mark's worth of a busy connection.
    static let retainedCapacity = 64 * 1024

    private var storage: UnsafeMutableRawBufferPointer?
    private var head = 0
    private var tail = 0

    init() {}

    deinit { storage?.deallocate() }

    /// Bytes queued.
    var count: Int { tail - head }
    var isEmpty: Bool { tail == head }

    /// Appends `bytes` after what is queued.
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        reserve(bytes.count)
        UnsafeMutableRawBufferPointer(rebasing: storage![tail..<(tail + bytes.count)]).copyMemory(from: bytes)
        tail += bytes.count
    }

    /// The queued bytes, contiguous, for one write.
    func withQueuedBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        guard let storage, !isEmpty else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return body(UnsafeRawBufferPointer(rebasing: storage[head..<tail]))
    }

    /// Drops the first `count` queued bytes (sent). Drained, the allocation is kept up to
    /// ``retainedCapacity`` and freed beyond.
    mutating func consume(_ count: Int) {
        head += count
        guard head == tail else { return }
        head = 0
        tail = 0
        if let storage, storage.count > Self.retainedCapacity {
            storage.deallocate()
            self.storage = nil
        }
    }

    /// Frees the allocation and forgets what was queued.
    mutating func removeAll() {
        storage?.deallocate()
        storage = nil
        head = 0
        tail = 0
    }

    private mutating func reserve(_ extra: Int) {
        let capacity = storage?.count ?? 0
        if tail + extra <= capacity { return }
        let live = tail - head
        if let storage, live + extra <= capacity {
            // Room at the front: move the live bytes there.
            UnsafeMutableRawBufferPointer(rebasing: storage[0..<live]).copyMemory(from: UnsafeRawBufferPointer(rebasing: storage[head..<tail]))
            head = 0
            tail = live
            return
        }
        var grown = max(capacity * 2, 4096)
        while grown < live + extra { grown *= 2 }
        let made = UnsafeMutableRawBufferPointer.allocate(byteCount: grown, alignment: 16)
        if let storage {
            UnsafeMutableRawBufferPointer(rebasing: made[0..<live]).copyMemory(from: UnsafeRawBufferPointer(rebasing: storage[head..<tail]))
            storage.deallocate()
        }
        storage = made
        head = 0
        tail = live
    }
}
