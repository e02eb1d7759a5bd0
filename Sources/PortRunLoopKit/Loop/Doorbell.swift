/// How other threads wake a parked loop: an eventfd, which the loop waits on in one of two ways.
///
/// A producer that finds the loop parked (``Inbox/parked``) rings with one `write` system call: no
/// lock and no libevent call on its side (the loop's base is lock-free; see ``EventBase``). A ring is
/// only a wake-up, never a count of work: the loop drains its whole inbox each time it wakes.
///
/// - **In libevent** (the running mode has fd sources, or a timer or deadline to wake for): the
///   eventfd is one of the base's events, edge-triggered, and is never read there: epoll reports
///   every write as a new event, and reading the counter back would cost a system call per wake-up
///   for nothing.
/// - **Directly** (``waitForRing()``; the mode has only ports and queued work, and no time to wake
///   at): the loop blocks in `read(2)` on the eventfd, which returns at the first ring and zeroes
///   the counter. This is a raw eventfd consumer exactly, with no `epoll_wait` and no libevent
///   dispatch between the producer's `write` and the loop's next turn; a thread that only receives
///   messages and `perform` blocks (the common worker) sleeps and wakes at that floor.
///
/// The two only ever cost each other a spurious wake-up: a ring taken by `read` is still an
/// edge in libevent's epoll set (its next dispatch reports it; the callback does nothing), and a
/// counter left non-zero by rings libevent took makes the next `read` return at once.
///
/// Thread-safety: ``ring(_:)`` from any thread; everything else on the loop's thread.
final class Doorbell {
    let fileDescriptor: Int32
    private var event: LoopEvent?

    init(base: EventBase) throws(PortRunLoopError) {
        fileDescriptor = try System.makeEventfd()
        do {
            event = try LoopEvent.edges(of: fileDescriptor, base: base, receiver: LibEventReceiver())
        } catch {
            System.closeDescriptor(fileDescriptor)
            throw error
        }
    }

    deinit {
        event = nil // event_free before the fd is closed
        System.closeDescriptor(fileDescriptor)
    }

    /// Wakes the loop whose doorbell's eventfd is `fileDescriptor` if it is in `epoll_wait` or
    /// ``waitForRing()``, or makes its next wait return at once. Given the descriptor, not the
    /// doorbell: the loop keeps it as a plain value (``PortRunLoop/doorbellDescriptor``).
    @inline(__always) static func ring(_ fileDescriptor: Int32) { System.signalEventfd(fileDescriptor) }

    /// Sleeps until the next ring (or one already made since the last wait). Loop thread only.
    func waitForRing() { System.waitEventfd(fileDescriptor) }
}
