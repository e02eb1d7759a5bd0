import Foundation

/// Where the sends of a remote ``MessagePort`` go: a port of another process, reached over a Unix
/// socket (``RemoteConnection`` from a client, ``InboundRoute`` from the publisher back to a client).
///
/// Thread-safety: implementations are `Sendable`; every member is safe from any thread.
protocol RemoteEndpoint: AnyObject, Sendable {
    /// Sends one message; waits (for a credit, or room in the socket) until the monotonic
    /// `deadline` at most. False when it was not sent (and never will be). `descriptors` go with it
    /// as `SCM_RIGHTS`; the caller keeps them (the kernel duplicates them).
    func send(before deadline: Double, msgid: UInt32, components: [Data], replyPort: MessagePort?,
              descriptors: [Int32]) -> Bool
    /// False once either side closed the connection (a non-blocking check).
    var isValid: Bool { get }
    /// Closes this side.
    func invalidate()
    /// The loop that reads the connection as frames arrive, if any (where the port's invalidation
    /// handler runs by default).
    var readingLoop: PortRunLoop? { get }
    /// Reads the connection on `loop` too, if no loop reads it yet, so that its end is seen with no
    /// send (an invalidation handler was set for `loop`).
    func watchForEnd(on loop: PortRunLoop)
}

/// Told when the loop takes a message that came from another process (to hand it to the handler,
/// or to drop it): the inbound connection gives the sender its credit back.
///
/// Thread-safety: called on the thread of the loop the receiving port is scheduled in.
protocol CreditSink: AnyObject, Sendable {
    func messageTaken()
}
