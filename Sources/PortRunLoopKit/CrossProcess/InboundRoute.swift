import Foundation
import Synchronization

/// The reply address of a message that came from another process: sends go back over the
/// connection it came on, as the reply to a request (once) or as a message to a reply port the
/// sender named.
///
/// A handler answers through it directly (``MessagePort/Message/reply(msgid:components:before:)``);
/// a ``MessagePort`` standing for it is made only when the handler asks for one
/// (``MessagePort/Message/replyPort``, see ``ReplyAddress``).
///
/// Thread-safety: `Sendable`: `connection` and `route` are immutable, `answered`, `invalidated`
/// and `portWasMade` are atomic (an `Atomic`, not a mutex: one is made per request from another
/// process), and `madePort` is guarded by `madePortLock`.
final class InboundRoute: RemoteEndpoint, @unchecked Sendable {
    enum Route {
        /// The answer to the request with this id: one send only (one that went out; a send that
        /// returned false may be made again).
        case reply(UInt64)
        /// Messages to the sender's reply port with this route id.
        case routed(UInt64)
    }

    private let connection: InboundConnection
    let route: Route
    private let answered = Atomic<Bool>(false)
    /// Set when the port made for this route was invalidated: later replies fail.
    private let invalidated = Atomic<Bool>(false)
    /// The port made for this route, held weakly: the port holds the route (its remote end), and
    /// while a handler keeps the port every read of ``MessagePort/Message/replyPort`` returns it.
    @exclusivity(unchecked) private weak var madePort: MessagePort?
    /// Guards `madePort`: a ``LockWord`` in the route itself, so a route costs no allocation for it.
    private let madePortLock = LockWord()
    /// Set once a port was made for this route: until then a reply goes out without taking
    /// `madePort`'s lock and loading its weak reference (most routes never get a port).
    private let portWasMade = Atomic<Bool>(false)

    init(connection: InboundConnection, route: Route) {
        self.connection = connection
        self.route = route
    }

    func send(before deadline: Double, msgid: UInt32, components: [Data], replyPort: MessagePort?,
              descriptors: [Int32]) -> Bool {
        Misuse.check(replyPort == nil, "MessagePort.send(before:msgid:components:from:): a reply to another process cannot carry a reply port")
        guard !invalidated.load(ordering: .acquiring) else { return false }
        let size = CrossProcessFrame.encodedSize(of: components)
        let limit = connection.publication.options.maximumMessageSize
        guard size <= limit else {
            connection.publication.logger.warning("MessagePort reply not sent: larger than the maximum message size", metadata: [
                LogKey.portName: "\(connection.publication.name)", LogKey.reason: "\(CrossProcessPortError.messageTooLarge(size: size, limit: limit))"])
            return false
        }
        let descriptorLimit = connection.publication.options.maximumFileDescriptorsPerMessage
        guard descriptors.count <= descriptorLimit else {
            connection.publication.logger.warning("MessagePort reply not sent: too many file descriptors", metadata: [
                LogKey.portName: "\(connection.publication.name)",
                LogKey.reason: "\(CrossProcessPortError.tooManyFileDescriptors(count: descriptors.count, limit: descriptorLimit))"])
            return false
        }
        let count = UInt8(truncatingIfNeeded: descriptors.count)
        let frame: CrossProcessFrame
        switch route {
        case .reply(let id):
            // Claimed while it is sent, so that two replies made at once never both go out; given
            // back when this one did not (the socket stayed full until its date, or the send
            // failed: a seqpacket frame goes out whole or not at all), so the handler may answer
            // again.
            guard !answered.exchange(true, ordering: .acquiringAndReleasing) else { return false }
            frame = CrossProcessFrame(kind: .reply, msgid: msgid, firstID: id, components: components, descriptorCount: count)
            let sent = connection.sendFrame(frame, size: size, descriptors: descriptors, before: deadline)
            if !sent { answered.store(false, ordering: .releasing) }
            return sent
        case .routed(let id):
            frame = CrossProcessFrame(kind: .routed, msgid: msgid, firstID: id, components: components, descriptorCount: count)
        }
        return connection.sendFrame(frame, size: size, descriptors: descriptors, before: deadline)
    }

    /// The ``MessagePort`` standing for this route: the one made earlier if a handler still holds
    /// it, else a new one.
    var port: MessagePort {
        withMadePortLocked {
            if let port = madePort { return port }
            let port = MessagePort(remote: self, logger: connection.publication.logger)
            madePort = port
            portWasMade.store(true, ordering: .releasing)
            return port
        }
    }

    private func withMadePortLocked<R>(_ body: () -> R) -> R {
        madePortLock.withLock(key: UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()), body)
    }

    /// Sends a reply: through the port made for this route while one exists (so it counts the
    /// send in its statistics), else directly. False once that port was invalidated.
    func reply(before date: Date, msgid: UInt32, components: [Data], descriptors: [Int32]) -> Bool {
        if portWasMade.load(ordering: .acquiring), let port = withMadePortLocked({ madePort }) {
            return port.send(before: date, msgid: msgid, components: components, fileDescriptors: descriptors)
        }
        Misuse.check(!date.timeIntervalSinceReferenceDate.isNaN, "MessagePort.Message.reply(before:): the date is NaN")
        return send(before: date.monotonicDeadline, msgid: msgid, components: components, replyPort: nil,
                    descriptors: descriptors)
    }

    var isValid: Bool {
        if invalidated.load(ordering: .acquiring) { return false }
        if case .reply = route, answered.load(ordering: .acquiring) { return false }
        return connection.isOpen
    }

    /// The port made for this route was invalidated: no more replies through the route.
    func invalidate() { invalidated.store(true, ordering: .releasing) }

    /// None: the connection is read by the publishing loop, for the publication, not for this port.
    var readingLoop: PortRunLoop? { nil }

    /// Nothing to do: the end of the connection is not reported to a reply port (only its own
    /// invalidation is).
    func watchForEnd(on loop: PortRunLoop) {}
}
