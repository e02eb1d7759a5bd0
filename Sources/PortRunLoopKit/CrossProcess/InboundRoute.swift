import Foundation
import Synchronization

/// The reply port of a message that came from another process: sends go back over the connection
/// it came on, as the reply to a request (once) or as a message to a reply port the sender named.
///
/// Thread-safety: `Sendable`: `connection` and `route` are immutable, `answered` is atomic (an
/// `Atomic`, not a mutex: one is made per request from another process).
final class InboundRoute: RemoteEndpoint, @unchecked Sendable {
    enum Route {
        /// The answer to the request with this id: one send only.
        case reply(UInt64)
        /// Messages to the sender's reply port with this route id.
        case routed(UInt64)
    }

    private let connection: InboundConnection
    let route: Route
    private let answered = Atomic<Bool>(false)

    init(connection: InboundConnection, route: Route) {
        self.connection = connection
        self.route = route
    }

    func send(before deadline: Double, msgid: UInt32, components: [Data], replyPort: MessagePort?,
              descriptors: [Int32]) -> Bool {
        precondition(replyPort == nil, "MessagePort.send(before:msgid:components:from:): a reply to another process cannot carry a reply port")
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
            guard !answered.exchange(true, ordering: .acquiringAndReleasing) else { return false }
            frame = CrossProcessFrame(kind: .reply, msgid: msgid, firstID: id, components: components, descriptorCount: count)
        case .routed(let id):
            frame = CrossProcessFrame(kind: .routed, msgid: msgid, firstID: id, components: components, descriptorCount: count)
        }
        return connection.sendFrame(frame, size: size, descriptors: descriptors, before: deadline)
    }

    var isValid: Bool {
        if case .reply = route, answered.load(ordering: .acquiring) { return false }
        return connection.isOpen
    }

    func invalidate() {}

    /// None: the connection is read by the publishing loop, for the publication, not for this port.
    var readingLoop: PortRunLoop? { nil }

    /// Nothing to do: the end of the connection is not reported to a reply port (only its own
    /// invalidation is).
    func watchForEnd(on loop: PortRunLoop) {}
}
