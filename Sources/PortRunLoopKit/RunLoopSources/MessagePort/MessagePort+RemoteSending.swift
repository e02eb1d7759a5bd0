import Foundation

extension MessagePort {
    /// A remote port's send: hands the message to the connection and counts it here.
    func send(to remote: any RemoteEndpoint, before date: Date, msgid: UInt32, components: [Data],
                      replyPort: MessagePort?, descriptors: [Int32]) -> Bool {
        Misuse.check(!date.timeIntervalSinceReferenceDate.isNaN, "MessagePort.send(before:): the date is NaN")
        let sent = remote.send(before: date.monotonicDeadline, msgid: msgid, components: components, replyPort: replyPort,
                               descriptors: descriptors)
        withLock { if sent { state.sent += 1 } else { state.rejected += 1 } }
        return sent
    }
}
