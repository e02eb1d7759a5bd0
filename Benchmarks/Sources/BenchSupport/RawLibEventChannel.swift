import CBenchLibEvent
import Synchronization

/// The libevent floor: the same mutex-protected array as ``RawEventfdChannel``, with libevent's
/// `event_active` on a doorbell event as the wake-up (exactly the primitive PortRunLoop is built
/// on). A producer rings only on the empty→non-empty transition; the consumer thread sits in
/// `event_base_loop` and the doorbell callback drains the whole array.
///
/// Thread-safety: `Sendable`; ``send()`` from any thread.
public final class RawLibEventChannel: MessageChannel, @unchecked Sendable {
    private let queue = Mutex<[Int]>([])
    private let signals = Atomic<Int>(0)
    private let receiver: Receiver
    private var thread: BenchThread!
    // Written by the consumer thread before `ready` is signalled; read-only afterwards.
    private var base: OpaquePointer?
    private var doorbell: OpaquePointer?
    private var batch: [Int] = [] // consumer thread only
    private let ready = Completion()

    /// Starts the consumer thread and waits until its event base exists.
    public init(receiver: Receiver) {
        self.receiver = receiver
        precondition(evthread_use_pthreads() == 0, "evthread_use_pthreads failed")
        queue.withLock { $0.reserveCapacity(1 << 16) }
        batch.reserveCapacity(1 << 16)
        thread = BenchThread { [self] in consume() }
        ready.wait()
    }

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
            event_active(doorbell, EV_READ, 0)
        }
    }

    private func consume() {
        base = event_base_new()
        let context = Unmanaged.passUnretained(self).toOpaque()
        doorbell = event_new(base, -1, 0, { _, _, context in
            Unmanaged<RawLibEventChannel>.fromOpaque(context!).takeUnretainedValue().drain()
        }, context)
        ready.signal()
        _ = event_base_loop(base, EVLOOP_NO_EXIT_ON_EMPTY)
        event_free(doorbell)
        event_base_free(base)
    }

    private func drain() {
        queue.withLock { swap(&$0, &batch) }
        for value in batch {
            if value < 0 { event_base_loopbreak(base); break }
            receiver.receive()
        }
        batch.removeAll(keepingCapacity: true)
    }
}
