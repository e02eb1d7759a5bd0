/// One way of getting a unit of work onto another thread: what every peer implements.
///
/// `send()` is the producer's hot path (one message, from any thread); on the consumer's thread each
/// message ends in one call of the channel's ``Receiver/receive()``. Perform-style peers
/// (`DispatchQueue.async`, NIO `execute`, `RunLoop.perform`, our `perform`) send a closure that
/// captures only the receiver (one class reference, so Swift needs no closure context allocation);
/// message-style peers (the raw floors, our `MessagePort`) send a small value.
///
/// Thread-safety: `Sendable`; ``send()`` from any thread.
public protocol MessageChannel: AnyObject, Sendable {
    /// Sends one message to the consumer.
    func send()
    /// How many times producers had to signal (wake) the consumer so far, when the peer exposes
    /// it; nil when it cannot be counted from outside (Dispatch, NIO).
    var wakeSignals: Int? { get }
    /// Stops the consumer and releases its thread. Call once, after the last message was handled.
    func shutDown()
}
