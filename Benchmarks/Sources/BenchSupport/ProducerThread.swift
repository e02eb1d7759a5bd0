import Synchronization

/// A producer thread that, each time it is started, sends a fixed number of messages on a channel
/// (the 2-producer throughput scenario). Kept alive across samples so that thread creation is not
/// measured.
///
/// Thread-safety: `Sendable`; ``start()`` and ``stop()`` from the driving thread.
public final class ProducerThread: @unchecked Sendable {
    private final class Control: Sendable {
        let go = Completion()
        let quit = Atomic<Bool>(false)
    }

    private let control = Control()
    private var thread: BenchThread!

    /// Starts a parked producer that sends `messages` messages on `channel` per ``start()``.
    public init(channel: any MessageChannel, messages: Int) {
        thread = BenchThread { [control] in
            while true {
                control.go.wait()
                if control.quit.load(ordering: .acquiring) { return }
                for _ in 0..<messages { channel.send() }
            }
        }
    }

    /// Lets the producer send one batch.
    public func start() { control.go.signal() }

    /// Ends the thread (after its current batch).
    public func stop() {
        control.quit.store(true, ordering: .releasing)
        control.go.signal()
        thread.join()
    }
}
