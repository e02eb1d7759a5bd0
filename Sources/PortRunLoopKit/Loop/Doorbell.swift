/// How other threads wake a parked loop: an eventfd the loop watches, edge-triggered.
///
/// A producer that finds the loop parked (``Inbox/parked``) rings with one `write` system call: no
/// lock and no libevent call on its side (the loop's base is lock-free; see ``EventBase``). The loop
/// never reads the eventfd: edge-triggered epoll reports every write as a new event, so the counter
/// only grows (by one per time the loop actually slept), and reading it back would cost the loop a
/// system call per wake-up for nothing. A ring is only a wake-up, never a count of work: the loop
/// drains its whole inbox each time it wakes.
///
/// Thread-safety: ``ring()`` from any thread; everything else on the loop's thread.
final class Doorbell {
    let fileDescriptor: Int32
    private var event: LoopEvent?

    init(base: EventBase) throws(PortRunLoopError) {
        fileDescriptor = try System.makeEventfd()
        do {
            let event = try LoopEvent(base: base, fileDescriptor: fileDescriptor,
                                      flags: [.read, .persist, .edgeTriggered], receiver: LibEventReceiver())
            try event.add()
            self.event = event
        } catch {
            System.closeDescriptor(fileDescriptor)
            throw error
        }
    }

    deinit {
        event = nil // event_free before the fd is closed
        System.closeDescriptor(fileDescriptor)
    }

    /// Wakes the loop if it is in `epoll_wait`, or makes its next wait return at once.
    @inline(__always) func ring() { System.signalEventfd(fileDescriptor) }
}
