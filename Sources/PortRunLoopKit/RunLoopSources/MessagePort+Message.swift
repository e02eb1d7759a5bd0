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
    /// Thread-safety: a value type; `Sendable`.
    public struct Message: Sendable {
        /// The identifier the sender chose (`msgid`). Thread-safety: read-only for users.
        public internal(set) var msgid: UInt32
        /// The data the sender attached; empty for a pure signal. Thread-safety: read-only for users.
        public internal(set) var components: [Data]
        /// The port the sender named for replies (`send(..., from:)`), if any; for a message from
        /// another process that asks for an answer, a remote port made on first use (and the same
        /// port on every later read). ``reply(msgid:components:before:)`` answers without making it.
        /// Thread-safety: read-only for users; any thread.
        public var replyPort: MessagePort? { replyAddress?.port }
        /// Where replies go.
        var replyAddress: ReplyAddress?
        /// The port this message arrived on. Thread-safety: immutable.
        public let receivePort: MessagePort
        /// The file descriptors the sender passed (``MessagePort/send(before:msgid:components:fileDescriptors:from:)``),
        /// owned by the message: each is closed when the last copy of the message is released,
        /// unless the handler took it (``TransferredFileDescriptor/take()``). Empty for most
        /// messages. Thread-safety: read-only for users; the descriptors are `Sendable`.
        public internal(set) var fileDescriptors: [TransferredFileDescriptor] = []

        init(msgid: UInt32, components: [Data], replyAddress: ReplyAddress?, receivePort: MessagePort,
             fileDescriptors: [TransferredFileDescriptor] = []) {
            self.msgid = msgid
            self.components = components
            self.replyAddress = replyAddress
            self.receivePort = receivePort
            self.fileDescriptors = fileDescriptors
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
