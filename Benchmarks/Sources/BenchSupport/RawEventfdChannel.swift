#if canImport(Glibc)
import Glibc
#endif
import CBenchSupport
import Synchronization

/// The floor: what the machine allows for "hand an item to another thread and wake it".
///
/// A mutex-protected array plus an `eventfd`. A producer appends under the lock and writes the
/// eventfd only when it found the array empty (one signal per empty→non-empty transition); the
/// consumer blocks in `read(2)`, swaps the whole array out under the lock and handles the batch.
/// Nothing else: no modes, no ordering guarantees beyond FIFO, no shutdown semantics.
///
/// Thread-safety: `Sendable`; ``send()`` from any thread.
public final class RawEventfdChannel: MessageChannel, @unchecked Sendable {
    private let fd: Int32
    private let queue = Mutex<[Int]>([])
    private let signals = Atomic<Int>(0)
    private let receiver: Receiver
    private var thread: BenchThread!

    /// Starts the consumer thread.
    public init(receiver: Receiver) {
        self.receiver = receiver
        self.fd = eventfd(0, CBENCH_EFD_CLOEXEC)
        precondition(fd >= 0, "eventfd failed, errno \(errno)")
        queue.withLock { $0.reserveCapacity(1 << 16) }
        thread = BenchThread { [self] in consume() }
    }

    deinit { close(fd) }

    public func send() { push(1) }

    public var wakeSignals: Int? { signals.load(ordering: .relaxed) }

    public func shutDown() {
        push(-1)
        thread.join()
    }

    @inline(__always)
    private func push(_ value: Int) {
        let wasEmpty = queue.withLock { queue -> Bool in
            let empty = queue.isEmpty
            queue.append(value)
            return empty
        }
        if wasEmpty {
            signals.add(1, ordering: .relaxed)
            var one: UInt64 = 1
            _ = write(fd, &one, 8)
        }
    }

    private func consume() {
        var batch: [Int] = []
        batch.reserveCapacity(1 << 16)
        while true {
            var counter: UInt64 = 0
            _ = read(fd, &counter, 8) // blocks until at least one signal
            queue.withLock { swap(&$0, &batch) }
            for value in batch {
                if value < 0 { return }
                receiver.receive()
            }
            batch.removeAll(keepingCapacity: true)
        }
    }
}
