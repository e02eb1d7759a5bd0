import Foundation

/// One request of a remote port waiting for its reply
/// (``MessagePort/sendRequest(msgid:components:sendTimeout:receiveTimeout:)-834zi``): a
/// ``BlockingCall`` that the connection completes when it reads the reply or finds the connection
/// ended, on whichever thread reads the frames (the caller's own loop, through the request's
/// fd source in its private mode; the `readingOn:` loop; or the caller polling the socket). At the receive
/// deadline the wait completes it itself: the caller then finds no reply (a timeout).
///
/// Thread-safety: `@unchecked Sendable`; `reply` is guarded by the connection's mutex (written
/// there before ``BlockingCall/complete()``, read there after); the rest is ``BlockingCall``'s.
final class ReplyWait: BlockingCall, @unchecked Sendable {
    /// What a reply carries.
    struct Reply {
        let msgid: UInt32
        let components: [Data]
        let descriptors: [TransferredFileDescriptor]
    }

    /// The reply, once read. `@exclusivity(unchecked)`: the connection's mutex makes every access
    /// exclusive (a run-time check is ~80 instructions per access).
    @exclusivity(unchecked) var reply: Reply?

    /// Nothing has started that must be waited for: the wait ends (with no reply: a timeout).
    override func deadlinePassed() { complete() }
}
