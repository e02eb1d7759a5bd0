import Foundation
import PortRunLoopFuzzSupport
import PortRunLoopKit

/// `fuzz-cross-process-frame`: the cross-process wire format (``CrossProcessFrame/parse``), as
/// both sides of a connection read it (`InboundConnection.readFrames`,
/// `RemoteConnection+Reading`).
///
/// The connection is a `SOCK_SEQPACKET` socket: the kernel keeps each frame one record, so a
/// reader never reassembles bytes; what it must do is refuse a record that is not exactly one
/// frame. The first byte picks the mode; the rest is its input.
///
/// - Even: one record. It parses to a frame or a ``FrameError``; a frame encodes back to exactly
///   the record; the record cut anywhere (the first piece of every split plan, one byte at a time
///   and at random points) is refused, and so is a record holding the frame twice; a frame that
///   declares descriptors keeps the descriptor rule both readers apply; and the records the split
///   plans make, read in order as a connection reads them, never trap.
/// - Odd: records (each a 16-bit length and its bytes) sent over a real connection to a port
///   published in this process (``CrossProcessLivePublisher``), read by its `readFrames`: the
///   publisher reads them or closes the connection within 5 s, and ends it as the records call for.
package enum CrossProcessFrameHarness: FuzzHarness {
    package static let targetName = "fuzz-cross-process-frame"

    package static func run(_ input: UnsafeRawBufferPointer) throws(InvariantViolation) {
        guard let mode = input.first else { return }
        let bytes = UnsafeRawBufferPointer(rebasing: input[1...])
        if mode & 1 == 1 {
            try live(records: records(bytes))
            return
        }
        let whole = parse(bytes)
        if case .success(let frame) = whole {
            try require(frame.encoded().elementsEqual(bytes), "a parsed frame does not encode back to its bytes")
            try require(CrossProcessFrame.encodedSize(of: frame.components) == bytes.count, "encodedSize disagrees with the frame's length")
            // Two frames in one record are not a frame.
            var twice = [UInt8](bytes)
            twice += twice
            try require(twice.withUnsafeBytes { parse($0) }.isFailure, "a record holding a frame twice was accepted")
            // The descriptor rule: before the announcement none; after it exactly the count.
            let announced = frame.descriptorViolation(received: Int(frame.descriptorCount), limit: 255, announced: true, sender: "peer")
            try require(announced == nil, "a frame's own descriptor count broke the rule after the announcement: \(announced ?? "")")
            let early = frame.descriptorViolation(received: Int(frame.descriptorCount), limit: 255, announced: false, sender: "peer")
            try require((early == nil) == (frame.descriptorCount == 0), "descriptors before the announcement were not refused")
        }
        for cuts in ByteSplits.plans(for: bytes) where !cuts.isEmpty {
            let pieces = ByteSplits.pieces(of: bytes, cuts: cuts)
            if whole.isSuccess {
                try require(parse(pieces[0]).isFailure, "a frame cut after \(pieces[0].count) of \(bytes.count) bytes was accepted")
            }
            // The records in order, as a connection reads them: each one parsed on its own; the
            // connection's state (descriptors announced) carried from one to the next.
            var announced = false
            for piece in pieces {
                guard case .success(let frame) = parse(piece) else { continue }
                if frame.kind == .descriptors { announced = true }
                _ = frame.descriptorViolation(received: 0, limit: 0, announced: announced, sender: "peer")
            }
        }
    }

    /// The records of the live mode: each a 16-bit big-endian length and that many bytes (fewer
    /// at the end).
    static func records(_ bytes: UnsafeRawBufferPointer) -> [[UInt8]] {
        var records: [[UInt8]] = []
        var offset = 0
        while offset + 2 <= bytes.count {
            let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            let end = min(offset + 2 + length, bytes.count)
            records.append(Array(bytes[(offset + 2)..<end]))
            offset = end
        }
        return records
    }

    /// The records sent to a port published in this process, on a connection of their own: the
    /// publisher reads them all or closes the connection, within 5 s; and how it ends the
    /// connection is what the records call for (a protocol violation at the first record that is
    /// not a message frame within the rules, else the end), when the credits do not make it
    /// depend on how fast its loop takes the messages.
    private static func live(records: [[UInt8]]) throws(InvariantViolation) {
        guard let reason = CrossProcessLivePublisher.shared.exchange(records) else {
            throw InvariantViolation("the publisher neither read \(records.count) records nor closed the connection within 5 s")
        }
        var announced = false
        var messages = 0
        var expected: String? = "closed"
        for record in records {
            if record.isEmpty { break } // an empty record reads as the end
            let outcome = record.withUnsafeBytes { parse($0) }
            guard record.count <= CrossProcessLivePublisher.maximumFrameSize, case .success(let frame) = outcome,
                  frame.descriptorViolation(received: 0, limit: 253, announced: announced, sender: "peer") == nil else {
                expected = "violation"
                break
            }
            if frame.kind == .descriptors {
                announced = true
                continue
            }
            guard frame.kind == .message else {
                expected = "violation"
                break
            }
            messages += 1
            if messages > CrossProcessLivePublisher.credits {
                expected = nil // within the credits or beyond them, as the loop's pace decides
                break
            }
        }
        let actual: String
        switch reason {
        case .closed: actual = "closed"
        case .protocolViolation: actual = "violation"
        default: actual = "\(reason)"
        }
        try require(expected == nil || expected == actual, "the publisher ended the connection as \(reason), not \(expected ?? "")")
    }

    private static func parse(_ bytes: UnsafeRawBufferPointer) -> Result<CrossProcessFrame, FrameError> {
        do throws(FrameError) { return .success(try CrossProcessFrame.parse(bytes)) } catch { return .failure(error) }
    }

    package static func seeds() -> [FuzzSeed] {
        let payload = Data("hello".utf8)
        let frames: [(String, CrossProcessFrame)] = [
            ("message-empty", CrossProcessFrame(kind: .message)),
            ("message-components", CrossProcessFrame(kind: .message, msgid: 7, components: [payload, Data(), Data([0, 0xFF])])),
            ("message-request", CrossProcessFrame(kind: .message, flags: .request, msgid: 1, firstID: 42, components: [payload])),
            ("message-reply-route", CrossProcessFrame(kind: .message, flags: [.request, .replyRoute], msgid: 2, firstID: 5, secondID: 9,
                                                      answerMicroseconds: 120)),
            ("message-descriptors", CrossProcessFrame(kind: .message, msgid: 3, components: [payload], descriptorCount: 2)),
            ("credit", CrossProcessFrame(kind: .credit, firstID: 16)),
            ("reply", CrossProcessFrame(kind: .reply, msgid: 4, firstID: 42, components: [payload])),
            ("routed", CrossProcessFrame(kind: .routed, msgid: 5, firstID: 9, components: [payload, payload], descriptorCount: 1)),
            ("closing", CrossProcessFrame(kind: .closing)),
            ("descriptors", CrossProcessFrame(kind: .descriptors)),
        ]
        var seeds = frames.map { FuzzSeed($0.0, [0] + $0.1.encoded()) }
        // The live mode: records for a published port.
        func live(_ name: String, _ records: [[UInt8]]) -> FuzzSeed {
            FuzzSeed("live-" + name, [1] + records.flatMap { [UInt8($0.count >> 8), UInt8($0.count & 0xFF)] + $0 })
        }
        let message = CrossProcessFrame(kind: .message, msgid: 1, components: [payload]).encoded()
        seeds.append(live("messages", [message, CrossProcessFrame(kind: .message, flags: .request, msgid: 2, firstID: 7).encoded(), message]))
        seeds.append(live("announced", [CrossProcessFrame(kind: .descriptors).encoded(), message]))
        seeds.append(live("descriptors-unannounced", [CrossProcessFrame(kind: .message, descriptorCount: 1).encoded()]))
        seeds.append(live("publisher-kind", [message, CrossProcessFrame(kind: .credit, firstID: 1).encoded()]))
        seeds.append(live("empty-record", [message, [], message]))
        seeds.append(live("beyond-credits", Array(repeating: message, count: 12)))
        seeds.append(live("garbage", [Array("not a frame".utf8)]))
        // Edge cases: a header only, a length that runs past the record, two frames in one record.
        let header = CrossProcessFrame(kind: .message, components: [payload]).encoded()
        seeds.append(FuzzSeed("edge-truncated", [0] + Array(header.prefix(CrossProcessFrame.headerSize + 2))))
        var long = header
        long[CrossProcessFrame.headerSize] = 0xFF
        seeds.append(FuzzSeed("edge-length-past-end", [0] + long))
        seeds.append(FuzzSeed("edge-two-frames", [0] + CrossProcessFrame(kind: .closing).encoded() + CrossProcessFrame(kind: .descriptors).encoded()))
        seeds.append(FuzzSeed("edge-empty", [0]))
        return seeds
    }
}

extension Result {
    var isSuccess: Bool { if case .success = self { true } else { false } }
    var isFailure: Bool { !isSuccess }
}
