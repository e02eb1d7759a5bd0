/// Limits and access rules of a cross-process connection, for both sides
/// (``MessagePortNameRegistry/publish(_:as:on:inModes:options:)`` and
/// ``MessagePortNameRegistry/remotePort(named:options:readingOn:)``).
///
/// Thread-safety: a value type; `Sendable`.
public struct CrossProcessPortOptions: Sendable, Equatable {
    /// The default ``maximumMessageSize``: 64 KiB.
    ///
    /// Thread-safety: a constant.
    public static let defaultMaximumMessageSize = 64 * 1024

    /// The largest frame accepted or sent, in bytes, header included (36 bytes, plus 4 per
    /// component, plus the components' bytes). A publisher disconnects (and counts) a peer that
    /// sends a larger frame; a sender refuses a larger message before sending it (`send` returns
    /// false and logs; `sendRequest` throws ``CrossProcessPortError/messageTooLarge(size:limit:)``).
    /// The publisher's value is the one that counts for messages to it (clients read it when they
    /// look the name up). The kernel caps one `SOCK_SEQPACKET` record at about the socket's send
    /// buffer (some 200 KB by default); larger frames fail with `EMSGSIZE` (a false send, logged).
    ///
    /// Thread-safety: a value type.
    public var maximumMessageSize: Int

    /// The default ``maximumFileDescriptorsPerMessage``: 16.
    ///
    /// Thread-safety: a constant.
    public static let defaultMaximumFileDescriptorsPerMessage = 16

    /// The most file descriptors one message may carry (0 to 253, the kernel's `SCM_MAX_FD`). A
    /// sender refuses a message with more before sending it (`send` returns false and logs;
    /// `sendRequest` throws ``CrossProcessPortError/tooManyFileDescriptors(count:limit:)``); a
    /// receiver disconnects (and counts) a peer whose frame carries more (it closes every
    /// descriptor that came). Each side applies its own value to what it sends and receives.
    ///
    /// Thread-safety: a value type.
    public var maximumFileDescriptorsPerMessage: Int

    /// The user ids whose processes may connect (publisher) or be connected to (client), checked
    /// with `SO_PEERCRED` (which reports a process's effective uid). nil (the default): this
    /// process's own effective uid only (`geteuid`).
    ///
    /// Thread-safety: a value type.
    public var allowedUserIDs: Set<UInt32>?

    /// Makes options; see the properties.
    ///
    /// Thread-safety: a value type.
    public init(maximumMessageSize: Int = CrossProcessPortOptions.defaultMaximumMessageSize,
                allowedUserIDs: Set<UInt32>? = nil,
                maximumFileDescriptorsPerMessage: Int = CrossProcessPortOptions.defaultMaximumFileDescriptorsPerMessage) {
        Misuse.check((0...System.maximumDescriptorsPerFrame).contains(maximumFileDescriptorsPerMessage),
                     "CrossProcessPortOptions: maximumFileDescriptorsPerMessage must be within 0...\(System.maximumDescriptorsPerFrame)")
        self.maximumFileDescriptorsPerMessage = maximumFileDescriptorsPerMessage
        Misuse.check(maximumMessageSize >= CrossProcessFrame.headerSize,
                     "CrossProcessPortOptions: maximumMessageSize must be at least \(CrossProcessFrame.headerSize) (the frame header)")
        self.maximumMessageSize = maximumMessageSize
        self.allowedUserIDs = allowedUserIDs
    }

    /// Whether a peer running as `uid` is allowed.
    func allows(_ uid: UInt32) -> Bool {
        allowedUserIDs?.contains(uid) ?? (uid == System.currentUserID())
    }
}

/// A process connected to a ``PublishedMessagePort``, as the kernel reported it (`SO_PEERCRED`)
/// when it connected.
///
/// Thread-safety: a value type; `Sendable`.
public struct CrossProcessPeer: Sendable, Hashable, CustomStringConvertible {
    /// The peer's process id. Thread-safety: a value type.
    public let processID: Int32
    /// The peer's user id. Thread-safety: a value type.
    public let userID: UInt32
    /// The peer's group id. Thread-safety: a value type.
    public let groupID: UInt32

    /// Thread-safety: a value type.
    public var description: String { "pid \(processID) (uid \(userID), gid \(groupID))" }

    /// Why a peer's connection ended.
    ///
    /// Thread-safety: a value type; `Sendable`.
    public enum DisconnectReason: Sendable, Equatable, CustomStringConvertible {
        /// The peer closed its end (it invalidated its remote port, exited or was killed).
        case closed
        /// The peer broke the protocol (a malformed or oversized frame, a message beyond its
        /// credits); the publisher closed the connection.
        case protocolViolation(String)
        /// The published port was invalidated or unpublished.
        case unpublished
        /// A system call on the connection's socket failed on the publisher's side (the loop could
        /// not watch it, a read failed, or the credits could not be sent back), with its error; the
        /// publisher closed the connection rather than leave its peer waiting for credits or
        /// answers that would never come.
        case connectionFailed(String)

        /// Thread-safety: a value type.
        public var description: String {
            switch self {
            case .closed: "closed by the peer"
            case .protocolViolation(let why): "protocol violation: \(why)"
            case .unpublished: "unpublished"
            case .connectionFailed(let why): "connection failed: \(why)"
            }
        }
    }
}
