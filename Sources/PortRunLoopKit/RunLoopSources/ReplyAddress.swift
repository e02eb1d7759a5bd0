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
/// One reference, to either: an absent or present address is then released by one runtime call
/// where the batch's reused ``MessagePort/Message`` is dropped, not by a switch over two cases,
/// which the compiler outlines to a page of its own on the delivery path.
///
/// Thread-safety: `Sendable`; both kinds of target are.
struct ReplyAddress: Sendable {
    /// The ``MessagePort`` or the ``InboundRoute``.
    private let target: AnyObject & Sendable

    private init(target: AnyObject & Sendable) { self.target = target }

    /// An in-process reply port (`send(before:msgid:components:from:)`).
    static func port(_ port: MessagePort) -> ReplyAddress { ReplyAddress(target: port) }

    /// The connection a message from another process came on.
    static func inbound(_ route: InboundRoute) -> ReplyAddress { ReplyAddress(target: route) }

    /// The reply port as a ``MessagePort``; for a route, the one port made for it on first use.
    var port: MessagePort {
        if let route = target as? InboundRoute { return route.port }
        return unsafeDowncast(target, to: MessagePort.self)
    }

    /// Sends a reply (``MessagePort/Message/reply(msgid:components:fileDescriptors:before:)``):
    /// to the port, or over the route without making a port for it.
    func send(before date: Date, msgid: UInt32, components: [Data], descriptors: [Int32]) -> Bool {
        if let route = target as? InboundRoute {
            return route.reply(before: date, msgid: msgid, components: components, descriptors: descriptors)
        }
        return unsafeDowncast(target, to: MessagePort.self)
            .send(before: date, msgid: msgid, components: components, fileDescriptors: descriptors)
    }
}
