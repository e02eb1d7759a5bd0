/// Failures of cross-process ports (``MessagePortNameRegistry``, ``PublishedMessagePort``, remote
/// ports and ``MessagePort/sendRequest(msgid:components:sendTimeout:receiveTimeout:)-834zi``).
///
/// Thread-safety: a value type; `Sendable`.
public enum CrossProcessPortError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The name is empty, too long for a socket path, or has a character outside `[A-Za-z0-9._-]`
    /// (or starts with a dot).
    case invalidName(String, reason: String)
    /// The socket directory is not a directory owned by this user with mode 0700 (or could not be made).
    case unsafeDirectory(String, reason: String)
    /// Another live process publishes this name (it holds the name's lock).
    case nameInUse(String)
    /// Nobody publishes this name (no socket, a stale one left by a dead process, or the
    /// publisher does not accept connections).
    case notPublished(String)
    /// The process at the other end runs under a user id the options do not allow.
    case peerNotAllowed(uid: UInt32)
    /// A message larger than the maximum message size (header included) of this connection.
    case messageTooLarge(size: Int, limit: Int)
    /// A message with more file descriptors than ``CrossProcessPortOptions/maximumFileDescriptorsPerMessage``.
    case tooManyFileDescriptors(count: Int, limit: Int)
    /// The request could not be sent before its send timeout (no credit, or no room in the socket).
    case sendTimedOut
    /// The request was sent but no reply came before its receive timeout.
    case receiveTimedOut
    /// The task awaiting an async request was cancelled before the reply came (a reply that comes
    /// later is dropped).
    case cancelled
    /// The port was invalidated (on this side or the other) before or while the call ran.
    case invalidPort
    /// The process at the other end closed the connection or died while the call waited.
    case peerDied
    /// The call needs a remote port (one made by ``MessagePortNameRegistry/remotePort(named:options:readingOn:)``).
    case notARemotePort
    /// A system call failed with this errno.
    case systemCallFailed(String, errno: Int32)
    /// The loop could not take the port's socket as a source (the kernel refused to watch it, or
    /// a descriptor the watch needs could not be made): the loop's error.
    case loopRefusedSocket(PortRunLoopError)

    public var description: String {
        switch self {
        case .invalidName(let name, let reason): "invalid cross-process port name '\(name)': \(reason)"
        case .unsafeDirectory(let path, let reason): "unsafe cross-process port directory \(path): \(reason)"
        case .nameInUse(let name): "the name '\(name)' is in use by a live process"
        case .notPublished(let name): "no live process publishes the name '\(name)'"
        case .peerNotAllowed(let uid): "the peer runs as uid \(uid), which is not allowed"
        case .messageTooLarge(let size, let limit): "message of \(size) bytes exceeds the maximum of \(limit)"
        case .tooManyFileDescriptors(let count, let limit): "message with \(count) file descriptors exceeds the maximum of \(limit)"
        case .sendTimedOut: "the request could not be sent before the send timeout"
        case .receiveTimedOut: "no reply came before the receive timeout"
        case .cancelled: "the task awaiting the reply was cancelled"
        case .invalidPort: "the port is invalid"
        case .peerDied: "the peer closed the connection or died"
        case .notARemotePort: "the call needs a remote port"
        case .systemCallFailed(let call, let code): "\(call) failed: \(System.Errno(code))"
        case .loopRefusedSocket(let error): "the loop could not watch the port's socket: \(error)"
        }
    }
}

extension CrossProcessPortError {
    /// What a call of a cross-process port throws for a loop's error (a loop that would not take
    /// the port's socket, or a thread the call needs): a loop that shut down is ``invalidPort``, a
    /// thread the system would not make ``systemCallFailed(_:errno:)`` (`"pthread_create"`),
    /// anything else ``loopRefusedSocket(_:)``.
    init(_ error: PortRunLoopError) {
        switch error {
        case .loopShutDown: self = .invalidPort
        case .threadCreationFailed(let code): self = .systemCallFailed("pthread_create", errno: code)
        default: self = .loopRefusedSocket(error)
        }
    }
}
