import Foundation

/// One frame of the cross-process wire format: one `SOCK_SEQPACKET` record (the kernel keeps frame
/// boundaries, so a frame is always read whole or not at all). All integers are little-endian.
///
/// ```
/// offset size field
///  0     4    magic "PRLX" (0x50 0x52 0x4C 0x58)
///  4     1    version (3)
///  5     1    kind: 1 message, 2 credit, 3 reply, 4 routed message, 5 closing, 6 descriptors
///  6     1    flags: bit 0 request (message), bit 1 carries a reply route (message); others zero
///  7     1    descriptor count: the file descriptors sent with the frame as `SCM_RIGHTS`
///             (message, reply, routed message; 0 otherwise)
///  8     4    msgid (message, reply, routed message; 0 otherwise)
/// 12     4    component count n (0 for credit)
/// 16     8    first id: request id (request message, reply), credits returned (credit), route (routed message)
/// 24     8    second id: reply route (message with bit 1); 0 otherwise
/// 32     4    answer time: microseconds from the sender's reading of the peer's last frame to
///             this frame's send; 0xFFFFFFFF when it had read none (or longer ago) (``AnswerTiming``)
/// 36     4*n  the length of each component
/// 36+4n  …    the components' bytes, back to back
/// ```
///
/// A frame is exactly `36 + 4n + Σ lengths` bytes. See the CrossProcessPorts article.
package struct CrossProcessFrame: Equatable {
    package enum Kind: UInt8 {
        /// A message for the published port (client to publisher); costs one credit.
        case message = 1
        /// Credits returned to the sender (publisher to client).
        case credit = 2
        /// The answer to a request message (publisher to client).
        case reply = 3
        /// A message for a reply port the client named (publisher to client).
        case routed = 4
        /// The publisher withdrew the port (invalidated or unpublished) and closes the connection
        /// (publisher to client; no fields): what tells a client this from the publisher's death.
        case closing = 5
        /// The sender's frames may carry file descriptors from here on (either direction; no
        /// fields): the receiver reads every later frame of the connection with a control buffer
        /// (`recvmsg`), and each earlier one without (`recv`, the cheaper call per frame;
        /// Docs/Benchmarks.md, `CrossProcess.RoundTrip.Ours`). A sender
        /// sends it once, just before its first frame with descriptors.
        case descriptors = 6
    }

    /// Message flags.
    package struct Flags: OptionSet, Equatable {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        package static let request = Flags(rawValue: 1)
        package static let replyRoute = Flags(rawValue: 2)
    }

    package static let magic: [UInt8] = [0x50, 0x52, 0x4C, 0x58]
    package static let version: UInt8 = 3
    package static let headerSize = 36
    /// The answer time of a frame whose sender had read none of the peer's (``answerMicroseconds``).
    static let noAnswer = UInt32.max
    /// Where the answer time sits in the header: a sender may write it into an encoded frame
    /// just before the send (``InboundConnection``).
    static let answerOffset = 32
    /// The magic and the version as the low 5 bytes of the header's first little-endian word.
    static let leadingWord: UInt64 = 0x50 | 0x52 << 8 | 0x4C << 16 | 0x58 << 24 | UInt64(version) << 32

    package var kind: Kind
    package var flags: Flags = []
    package var msgid: UInt32 = 0
    package var firstID: UInt64 = 0
    package var secondID: UInt64 = 0
    package var components: [Data] = []
    /// How many file descriptors travel with the frame (as `SCM_RIGHTS` on the same `sendmsg`).
    package var descriptorCount: UInt8 = 0
    /// How long the sender took to send this frame after reading the peer's last one, in
    /// microseconds (``AnswerTiming``); ``noAnswer`` when it had read none.
    package var answerMicroseconds: UInt32 = noAnswer

    /// A frame with these fields (unset: zero, none, no answer time).
    package init(kind: Kind, flags: Flags = [], msgid: UInt32 = 0, firstID: UInt64 = 0, secondID: UInt64 = 0,
                 components: [Data] = [], descriptorCount: UInt8 = 0, answerMicroseconds: UInt32 = noAnswer) {
        self.kind = kind
        self.flags = flags
        self.msgid = msgid
        self.firstID = firstID
        self.secondID = secondID
        self.components = components
        self.descriptorCount = descriptorCount
        self.answerMicroseconds = answerMicroseconds
    }

    /// The encoded size of a frame with these components.
    package static func encodedSize(of components: [Data]) -> Int {
        components.reduce(headerSize + 4 * components.count) { $0 + $1.count }
    }

    /// The frame's bytes.
    package func encoded() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Self.encodedSize(of: components)) { buffer, count in
            count = encode(into: UnsafeMutableRawBufferPointer(buffer))
        }
    }

    /// Writes the frame's bytes at the start of `buffer`, which holds at least
    /// ``encodedSize(of:)`` bytes, and returns how many: what a sender uses to build a frame in a
    /// buffer it keeps, without allocating per message.
    func encode(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        Self.encode(kind: kind, flags: flags, msgid: msgid, firstID: firstID, secondID: secondID,
                    descriptorCount: descriptorCount, answerMicroseconds: answerMicroseconds,
                    components: components, into: buffer)
    }

    /// ``encode(into:)`` for the frame with these fields, made from them directly: a sender's
    /// hot path writes its frame without first building a ``CrossProcessFrame`` (whose copy of
    /// `components` is a retain and a release per message). The one writer of the layout above.
    static func encode(kind: Kind, flags: Flags, msgid: UInt32, firstID: UInt64, secondID: UInt64,
                       descriptorCount: UInt8, answerMicroseconds: UInt32, components: [Data],
                       into buffer: UnsafeMutableRawBufferPointer) -> Int {
        // The size is checked as the lengths are written (the header and the length table first),
        // not computed beforehand: the caller has just computed it to size the buffer.
        InternalFailure.check(buffer.count >= headerSize + 4 * components.count, "CrossProcessFrame.encode: the buffer is too small")
        var offset = 0
        func put<T: FixedWidthInteger>(_ value: T) {
            buffer.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
            offset += MemoryLayout<T>.size
        }
        // Magic, version, kind and flags: the header's first 8 bytes, in one store.
        put(leadingWord | UInt64(kind.rawValue) << 40 | UInt64(flags.rawValue) << 48 | UInt64(descriptorCount) << 56)
        put(msgid)
        put(UInt32(components.count))
        put(firstID)
        put(secondID)
        put(answerMicroseconds)
        guard !components.isEmpty else { return offset }
        var total = offset + 4 * components.count
        for component in components {
            let count = component.count
            put(UInt32(count))
            total += count
        }
        InternalFailure.check(buffer.count >= total, "CrossProcessFrame.encode: the buffer is too small")
        for component in components {
            // One access to the component's storage per copy: every access to a `Data` that owns
            // its bytes is checked for exclusivity at run time (~80 instructions).
            offset += component.withUnsafeBytes { bytes in
                UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<(offset + bytes.count)]).copyMemory(from: bytes)
                return bytes.count
            }
        }
        return offset
    }
}

/// Why a frame was refused: each a typed outcome of ``CrossProcessFrame/parse(_:maximumComponents:)``.
package enum FrameError: Error, Equatable {
    case tooShort(Int)
    case badMagic
    case unsupportedVersion(UInt8)
    case unknownKind(UInt8)
    case badFlags(UInt8)
    /// A frame of a kind that never carries descriptors announced some.
    case unexpectedDescriptors(UInt8)
    case tooManyComponents(UInt32)
    case lengthMismatch(expected: Int, actual: Int)
    case unexpectedField
}

extension CrossProcessFrame {
    /// The most components one message may carry.
    package static let maximumComponents: UInt32 = 4096

    /// Parses one whole frame, checking every field and length: never traps, never reads out of
    /// bounds; any inconsistency is a ``FrameError``, thrown. (Typed throws rather than a
    /// `Result`: a reader gets the frame itself, not a copy bound out of a `Result` that is then
    /// destroyed, an outlined copy and two destroys per frame read.)
    package static func parse(_ bytes: UnsafeRawBufferPointer, maximumComponents: UInt32 = maximumComponents) throws(FrameError) -> CrossProcessFrame {
        guard bytes.count >= headerSize else { throw .tooShort(bytes.count) }
        // The first 8 bytes in one load: magic, version, kind, flags, descriptor count.
        let leading: UInt64 = load(bytes, 0)
        guard leading & 0xFFFF_FFFF == leadingWord & 0xFFFF_FFFF else { throw .badMagic }
        guard leading & 0xFF_FFFF_FFFF == leadingWord else { throw .unsupportedVersion(bytes[4]) }
        let rawKind = UInt8(truncatingIfNeeded: leading >> 40)
        guard let kind = Kind(rawValue: rawKind) else { throw .unknownKind(rawKind) }
        let rawFlags = UInt8(truncatingIfNeeded: leading >> 48)
        let flags = Flags(rawValue: rawFlags)
        let allowed: Flags = kind == .message ? [.request, .replyRoute] : []
        guard allowed.isSuperset(of: flags) else { throw .badFlags(rawFlags) }
        let descriptorCount = UInt8(truncatingIfNeeded: leading >> 56)
        guard descriptorCount == 0 || kind == .message || kind == .reply || kind == .routed else {
            throw .unexpectedDescriptors(descriptorCount)
        }
        let msgid: UInt32 = load(bytes, 8)
        let count: UInt32 = load(bytes, 12)
        let firstID: UInt64 = load(bytes, 16)
        let secondID: UInt64 = load(bytes, 24)
        let answerMicroseconds: UInt32 = load(bytes, answerOffset) // any value is a time
        guard count <= maximumComponents else { throw .tooManyComponents(count) }
        switch kind {
        case .credit:
            guard count == 0, msgid == 0, secondID == 0, firstID > 0, firstID <= UInt64(UInt32.max) else {
                throw .unexpectedField
            }
        case .message:
            guard flags.contains(.request) || firstID == 0, flags.contains(.replyRoute) || secondID == 0 else {
                throw .unexpectedField
            }
        case .reply, .routed:
            guard secondID == 0 else { throw .unexpectedField }
        case .closing, .descriptors:
            guard count == 0, msgid == 0, firstID == 0, secondID == 0 else { throw .unexpectedField }
        }
        let tableEnd = headerSize + 4 * Int(count)
        guard bytes.count >= tableEnd else { throw .lengthMismatch(expected: tableEnd, actual: bytes.count) }
        var total = tableEnd
        for index in 0..<Int(count) {
            let length: UInt32 = load(bytes, headerSize + 4 * index)
            total += Int(length) // at most 4096 * 4 GiB: no overflow in 64 bits
            guard total <= bytes.count else { throw .lengthMismatch(expected: total, actual: bytes.count) }
        }
        guard total == bytes.count else { throw .lengthMismatch(expected: total, actual: bytes.count) }
        var components = [Data]()
        if count > 0 { components.reserveCapacity(Int(count)) } // an empty array allocates nothing
        var offset = tableEnd
        for index in 0..<Int(count) {
            let length = Int(load(bytes, headerSize + 4 * index) as UInt32)
            // `Data(bytes:count:)` copies in one `memcpy`; `Data(bytes[range])` would go through
            // the generic `Sequence` initializer, an order of magnitude slower per component.
            components.append(Data(bytes: bytes.baseAddress! + offset, count: length))
            offset += length
        }
        return CrossProcessFrame(kind: kind, flags: flags, msgid: msgid, firstID: firstID,
                                          secondID: secondID, components: components, descriptorCount: descriptorCount,
                                          answerMicroseconds: answerMicroseconds)
    }

    /// The ``Kind/descriptors`` frame, encoded: what a sender sends before its first frame with
    /// descriptors on a connection.
    static let descriptorsFrame = CrossProcessFrame(kind: .descriptors).encoded()

    /// Before a side's first frame with descriptors on the connection `fd`: sends
    /// ``descriptorsFrame`` unless `announced` says it went already, and records that it did.
    /// Called with the lock every send of that side holds, so no frame with descriptors can reach
    /// the socket ahead of it. Nil once announced (now or before); otherwise the failed send's
    /// result, which the caller handles as its frame's (a full socket: wait for room, try again).
    static func announceDescriptors(on fd: Int32, announced: inout Bool) -> System.SocketResult? {
        guard !announced else { return nil }
        let result = descriptorsFrame.withUnsafeBytes { System.sendFrame(fd, $0) }
        guard case .done = result else { return result }
        announced = true
        return nil
    }

    /// Why the descriptors that came with this frame break the rules (Semantics X11), or nil when
    /// they keep them: none before the sender's ``Kind/descriptors`` frame (`announced` false),
    /// and afterwards exactly the frame's descriptor count, at most `limit`. `sender` names the
    /// other side in the message ("peer", "publisher"). Both sides check every frame they read
    /// with it before handling the frame.
    @inline(__always)
    package func descriptorViolation(received: Int, limit: Int, announced: Bool, sender: String) -> String? {
        guard received == 0 && descriptorCount == 0 || announced else {
            return "a frame carried file descriptors before the \(sender) announced them"
        }
        guard Int(descriptorCount) == received, received <= limit else {
            return "a frame announced \(descriptorCount) file descriptors and carried \(received) (at most \(limit))"
        }
        return nil
    }

    private static func load<T: FixedWidthInteger>(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> T {
        T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}
