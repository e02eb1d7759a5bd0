import Foundation

/// Where the replies to a message go: the reply port the sender named in-process, or the
/// connection a message from another process came on.
///
/// A message from another process that asks for an answer (a request, or a message naming a reply
/// port) gets an ``InboundRoute``, not a ``MessagePort``: a port is made for it only when a handler
/// reads ``MessagePort/Message/replyPort``, and ``MessagePort/Message/reply(msgid:components:before:)``
/// sends over the route directly. A publisher answering requests so allocates one small object per
/// request instead of a whole port (its locked state and queue on cache lines of their own, its
/// delivery gate and invalidation record), none of which a reply uses.
///
/// Thread-safety: `Sendable`; both cases are.
enum ReplyAddress: Sendable {
    /// An in-process reply port (`send(before:msgid:components:from:)`).
    case port(MessagePort)
    /// The connection a message from another process came on.
    case inbound(InboundRoute)

    /// The reply port as a ``MessagePort``; for a route, the one port made for it on first use.
    var port: MessagePort {
        switch self {
        case .port(let port): port
        case .inbound(let route): route.port
        }
    }

    /// Sends a reply (``MessagePort/Message/reply(msgid:components:fileDescriptors:before:)``):
    /// to the port, or over the route without making a port for it.
    func send(before date: Date, msgid: UInt32, components: [Data], descriptors: [Int32]) -> Bool {
        switch self {
        case .port(let port): port.send(before: date, msgid: msgid, components: components, fileDescriptors: descriptors)
        case .inbound(let route): route.reply(before: date, msgid: msgid, components: components, descriptors: descriptors)
        }
    }
}
