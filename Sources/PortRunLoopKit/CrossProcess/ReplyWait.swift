import Foundation

/// One request of a remote port waiting for its reply
/// (``MessagePort/sendRequest(msgid:components:sendTimeout:receiveTimeout:)-834zi``): a
/// ``BlockingCall`` that the connection completes when it reads the reply or finds the connection
/// ended, on whichever thread reads the frames (the caller's own loop, through the request's
/// fd source in its private mode; the `readingOn:` loop; the ``RequestReaderThread``; or the
/// caller polling the socket, which is how this wait sleeps on a thread that serves no loop:
/// ``lookWhileSpinning()`` and ``sleepWithoutServing(from:until:unless:)``). At the receive deadline
/// the wait completes it itself: the caller then finds no reply (a timeout).
///
/// An async request's wait has no waiting thread: the connection resumes its task
/// (``continuation``) when it completes the wait, and the reader thread's timer completes it at
/// its ``deadline``. An async request that cannot be sent yet waits the same way, for a credit or
/// room in the socket, in a wait of this kind that carries no reply (the connection's `roomWaits`).
///
/// Thread-safety: `@unchecked Sendable`; `reply`, `answerGap`, `continuation`, `cancelled` and `deadline` are
/// guarded by the connection's mutex (written there before ``BlockingCall/complete()``, read there
/// after); the rest is ``BlockingCall``'s.
final class ReplyWait: BlockingCall, @unchecked Sendable {
    /// The connection the request went out on (nil only for a wait that is never waited for, as
    /// in a test of the request table). Unowned: a wait is made and awaited inside a call on the
    /// connection, which the caller holds throughout.
    unowned(unsafe) let connection: RemoteConnection?

    init(waiter: PortRunLoop?, connection: RemoteConnection?) {
        self.connection = connection
        super.init(waiter: waiter, waitsByItself: true)
    }

    /// What a reply carries.
    struct Reply {
        let msgid: UInt32
        let components: [Data]
        let descriptors: [TransferredFileDescriptor]
    }

    /// The reply, once read. `@exclusivity(unchecked)`: the connection's mutex makes every access
    /// exclusive (a run-time check is ~80 instructions per access).
    @exclusivity(unchecked) var reply: Reply?
    /// How soon the exchange turned around with both sides awake, by the reply's answer times
    /// (``AnswerTiming``); infinity until the reply is read.
    @exclusivity(unchecked) var answerGap = Double.infinity
    /// An async request's task, once it waits; handed back (and cleared) by ``finish()``.
    @exclusivity(unchecked) var continuation: CheckedContinuation<Void, Never>?
    /// An async request whose task was cancelled before its reply came.
    @exclusivity(unchecked) var cancelled = false
    /// An async request's receive deadline (monotonic seconds), set once its frame went out;
    /// `.infinity` until then, and for a blocking request, whose waiter keeps its own. For a
    /// wait to send, the send deadline.
    @exclusivity(unchecked) var deadline = Double.infinity
    /// A wait to send that waits for room in the socket (a credit is in hand), not for a credit.
    @exclusivity(unchecked) var forRoom = false

    /// With the connection's mutex held: completes the wait and hands back the continuation of
    /// its task if one waits, for the connection to resume once it has let the mutex go.
    func finish() -> CheckedContinuation<Void, Never>? {
        complete()
        defer { continuation = nil }
        return continuation
    }

    /// Nothing has started that must be waited for: the wait ends (with no reply: a timeout).
    override func deadlinePassed() { complete() }

    /// A spinning waiter reads the socket for its reply (unless another thread is reading it).
    override func lookWhileSpinning() -> Bool { connection?.lookForReply(to: self) ?? isComplete }

    /// A waiter that serves no loop polls the socket for its reply (one thread at a time; the
    /// others wait for it to have read).
    override func sleepWithoutServing(from sleepStart: Double, until deadline: Double, unless broken: () -> Bool) -> Double {
        guard let connection else { return super.sleepWithoutServing(from: sleepStart, until: deadline, unless: broken) }
        return connection.pollForReply(to: self, from: sleepStart, until: deadline)
    }
}
