/// The baseline of the sparse-traffic scenario: `send()` calls the receiver on the sending thread,
/// no hand-off and no consumer thread. What it costs is the producer's own share (pacing, the
/// call); subtract it from a peer's number to get what that peer's hand-off and wake-up cost.
///
/// Thread-safety: `Sendable`; ``send()`` from one thread at a time.
public final class InlineChannel: MessageChannel, @unchecked Sendable {
    private let receiver: Receiver

    /// Makes the channel; nothing runs in the background.
    ///
    /// Thread-safety: any thread.
    public init(receiver: Receiver) { self.receiver = receiver }

    /// Calls the receiver now, on this thread.
    ///
    /// Thread-safety: one thread at a time.
    public func send() { receiver.receive() }

    /// Always nil: nothing is woken.
    ///
    /// Thread-safety: any thread.
    public var wakeSignals: Int? { nil }

    /// Nothing to stop.
    ///
    /// Thread-safety: any thread.
    public func shutDown() {}
}
