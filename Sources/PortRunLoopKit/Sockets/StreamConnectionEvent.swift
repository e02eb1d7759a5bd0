/// What happens to a ``StreamConnection`` besides bytes arriving, reported once each to its
/// ``StreamConnection/onEvent`` handler, on the connection's loop thread.
///
/// Thread-safety: a value type; `Sendable`.
public enum StreamConnectionEvent: Sendable, Hashable {
    /// The peer shut its output down (end of stream): no more bytes will arrive. Unless the
    /// connection allows half-closure (``StreamConnection/Options/allowsHalfClosure``), it then
    /// sends what it still has queued and closes (``closed(_:)`` follows).
    case inputEnded
    /// The outbound queue passed the high-water mark (false: hold further writes) or drained below
    /// the low-water mark again (true).
    case writabilityChanged(Bool)
    /// ``StreamConnection/shutdownOutput()`` completed: everything queued was sent and the peer
    /// was told no more comes.
    case outputShutDown
    /// The connection is closed and its descriptor released: nil when it was closed by
    /// ``StreamConnection/close(afterFlushing:)`` or after both directions ended, otherwise why. The
    /// last event.
    case closed(StreamConnectionError?)
}
