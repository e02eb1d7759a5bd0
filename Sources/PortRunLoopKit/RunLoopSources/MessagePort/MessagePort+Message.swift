import Foundation

extension MessagePort {
    /// One message received on a ``MessagePort`` (the counterpart of `NSPortMessage`; nested so its
    /// name cannot collide with Foundation's `PortMessage`).
    ///
    /// A handler may keep a message (it is an ordinary value); the loop never changes a message a
    /// handler has seen. (Internally, the loop reuses one value per delivered batch and only
    /// reassigns the per-message fields between handler calls, so a batch retains the receive
    /// port once instead of once per message; value semantics make that invisible.)
    ///
    /// Four stored words (the `msgid`, the components, the receive port, and the payload when it
    /// carries a reply address or file descriptors): a value of at most four words is passed to a
    /// handler in registers. A fifth word made it go through memory, and each message of a burst
    /// then paid a stalled load: the loop's narrow stores of the new `msgid` and components,
    /// followed at once by the 16-byte loads of the copy made for the call.
    ///
    /// Thread-safety: a value type; `Sendable`.
    public struct Message: Sendable {
        /// The identifier the sender chose (`msgid`). Thread-safety: read-only for users.
        public internal(set) var msgid: UInt32
        /// The data the sender attached; empty for a pure signal. Thread-safety: read-only for users.
        public internal(set) var components: [Data]
        /// The port this message arrived on. Thread-safety: immutable.
        public let receivePort: MessagePort
        /// The sender's payload when it carries a reply address or file descriptors (nil
        /// otherwise): where ``replyPort`` and ``fileDescriptors`` are read from.
        var extras: Payload?

        /// The port the sender named for replies (`send(..., from:)`), if any; for a message from
        /// another process that asks for an answer, a remote port made on first use (and the same
        /// port on every later read). ``reply(msgid:components:before:)`` answers without making it.
        /// Thread-safety: read-only for users; any thread.
        public var replyPort: MessagePort? { replyAddress?.port }
        /// Where replies go.
        var replyAddress: ReplyAddress? { extras?.replyAddress }
        /// The file descriptors the sender passed (``MessagePort/send(before:msgid:components:fileDescriptors:from:)``),
        /// owned by the message: each is closed when the last copy of the message is released,
        /// unless the handler took it (``TransferredFileDescriptor/take()``). Empty for most
        /// messages. Thread-safety: read-only for users; the descriptors are `Sendable`.
        public var fileDescriptors: [TransferredFileDescriptor] { extras?.fileDescriptors ?? [] }

        /// A message carrying `payload` (``carry(_:)``).
        init(msgid: UInt32, payload: Payload, receivePort: MessagePort) {
            self.init(msgid: msgid, components: [], receivePort: receivePort)
            carry(payload)
        }

        /// A message with no reply address or descriptors (a pure signal, or a reply without
        /// descriptors).
        init(msgid: UInt32, components: [Data], receivePort: MessagePort) {
            self.msgid = msgid
            self.components = components
            self.receivePort = receivePort
            self.extras = nil
        }

        /// Takes `payload`'s components, and the payload itself when it has a reply address or
        /// descriptors: the one place that decides what of a payload a message keeps.
        @inline(__always)
        mutating func carry(_ payload: Payload) {
            components = payload.components
            extras = payload.hasExtras ? payload : nil
        }

        /// Carries nothing: a pure signal's components, reply address and descriptors (none).
        @inline(__always)
        mutating func carryNothing() {
            components = []
            extras = nil
        }
    }
}

/// Receives the messages of a ``MessagePort`` on the thread of the loop the port is scheduled in
/// (the counterpart of `NSMachPortDelegate.handleMachMessage(_:)`).
///
/// Thread-safety: the port holds its delegate weakly and calls it only on its loop's thread.
public protocol MessagePortDelegate: AnyObject {
    /// Called once per message, in the order messages were sent (per sender), on the loop's thread.
    ///
    /// Thread-safety: called on the loop's thread only.
    func handleMessage(_ message: MessagePort.Message)
}
