import Foundation

extension MessagePort {
    /// One queued message: 16 bytes for a pure signal, which is what crosses CPUs per message in a
    /// burst (the producer writes it, the loop's CPU reads it).
    struct Envelope {
        let msgid: UInt32
        /// The components, reply port and sender's context; nil for a pure signal (no components,
        /// no reply port, sent with no `ServiceContext` set), so such a send neither allocates nor
        /// retains anything.
        let payload: Payload?
    }

    /// What a message carries besides its `msgid`. Immutable.
    final class Payload: Sendable {
        let components: [Data]
        /// Where replies go (``ReplyAddress``).
        let replyAddress: ReplyAddress?
        /// The sender's `ServiceContext`, restored around the handler (``CallerContext``).
        let context: CapturedContext?
        /// For a message that came from another process: told when the loop hands it to the
        /// handler (the sender's credit comes back; see ``CreditSink``).
        let creditSink: (any CreditSink)?
        /// The file descriptors the message carries (closed with the payload unless taken).
        let fileDescriptors: [TransferredFileDescriptor]
        /// Whether it has a reply address or descriptors: a delivered ``Message`` then keeps it
        /// (``Message/extras``); otherwise only its components. Kept, not derived: deriving it
        /// reads the descriptors array's header, one more cache line per delivered message.
        let hasExtras: Bool
        /// Whether it carries nothing but a credit sink: a pure signal from another process (one
        /// payload shared by all of a connection's signals). The loop delivers it as a pure
        /// signal and gives the credit back, with nothing to carry into the ``Message``.
        let carriesOnlyCredit: Bool

        convenience init(components: [Data], replyPort: MessagePort?, context: CapturedContext?, creditSink: (any CreditSink)? = nil,
             fileDescriptors: [TransferredFileDescriptor] = []) {
            self.init(components: components, replyAddress: replyPort.map(ReplyAddress.port), context: context,
                      creditSink: creditSink, fileDescriptors: fileDescriptors)
        }

        init(components: [Data], replyAddress: ReplyAddress?, context: CapturedContext?, creditSink: (any CreditSink)?,
             fileDescriptors: [TransferredFileDescriptor]) {
            self.fileDescriptors = fileDescriptors
            self.components = components
            self.replyAddress = replyAddress
            self.context = context
            self.creditSink = creditSink
            self.hasExtras = replyAddress != nil || !fileDescriptors.isEmpty
            self.carriesOnlyCredit = creditSink != nil && components.isEmpty && !hasExtras && context == nil
        }
    }

    struct State: ~Copyable {
        // The first cache line (the state is allocated on lines of its own): everything a send
        // touches, the lock included, 64 bytes. The loop takes it once per batch (the lock and the
        // swap of `queue`), so a batch moves one line between the CPUs, as in the floor.
        var queue = HandoffQueue<Envelope>()
        var sent = 0
        var limit: Int
        var loop: PortRunLoop?
        /// A copy of the gate's closed bit (``DeliveryGate``; set under this lock by ``invalidate()``
        /// after the gate closes), kept on the send's own cache line: the gate's word is written by
        /// the loop as each handler starts and ends, and a sender reading it per message would pull
        /// that line away from the loop during a burst.
        var isValid = true
        var readyOnLoop = false
        /// Guards everything in the state but itself (see ``MessagePort/lock()``).
        let word = LockWord()
        // The second line: what the loop reads per batch and senders only when the queue is
        // full or a send fails, so a burst's sends do not lose the first line to these reads.
        /// Senders waiting for room (the queue was full), each in the one blocking wait: whoever
        /// may have made room completes them all (``MessagePort/notifyRoomChanged()``). Checked by
        /// the loop per batch, on this line.
        var roomWaits = StateChangeWaits()
        weak var delegate: (any MessagePortDelegate)?
        var handler: (@Sendable (MessagePort.Message) -> Void)?
        var rejected = 0
        /// The sends among `rejected` that found the port full until their date (what is logged).
        var rejectedFull = 0
        var discarded = 0
        /// The modes of `loop` the port is scheduled in: the truth the loop's registration follows.
        var modes: Set<RunLoop.Mode> = []
        /// A loop the port was removed from whose thread has not let go of it yet (it may be
        /// delivering a batch it took). No other loop takes messages until it has.
        var leaving: PortRunLoop?
        /// Messages delivered by loops whose batch ended after a handler took the port out of
        /// them (``countDelivered(afterLeaving:)``); the rest are in `deliveredCounter`.
        var deliveredAfterLeaving = 0
        /// `loop`'s registration of the port, once its thread has made it: what that thread looks
        /// up per batch, instead of hashing the port into its table. Only `loop`'s thread reads the
        /// object. Cleared whenever `loop` is (the port leaves its last mode there, or is
        /// invalidated, as every port of a loop that shuts down is): that breaks the reference
        /// cycle with the registration's own reference to the port.
        var registration: PortRegistration?
    }

    // The lock that guards `state`: the ``LockWord`` on the state's first line (one inlined
    // atomic to lock and one to unlock), keyed in the parking lot by the state's address.
    @inline(__always) func lock() { state.word.lock(key: stateStorage) }
    @inline(__always) func unlock() { state.word.unlock(key: stateStorage) }
    @inline(__always) func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}
