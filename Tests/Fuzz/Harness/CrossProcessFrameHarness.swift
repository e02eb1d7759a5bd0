import Foundation
import PortRunLoopFuzzSupport
import PortRunLoopKit

/// `fuzz-cross-process-frame`: the cross-process wire format (``CrossProcessFrame/parse``), as
/// both sides of a connection read it (`InboundConnection.readFrames`,
/// `RemoteConnection+Reading`).
///
/// The connection is a `SOCK_SEQPACKET` socket: the kernel keeps each frame one record, so a
/// reader never reassembles bytes; what it must do is refuse a record that is not exactly one
/// frame. The check: the whole input parses to a frame or a ``FrameError``; a frame encodes back
/// to exactly the input; a record cut anywhere (the first piece of every split plan, one byte at a
/// time and at random points) is refused, and so is a record holding the frame twice; a frame
/// that declares descriptors keeps the descriptor rule both readers apply; and the records the
/// split plans make, read in order as a connection reads them, never trap.
package enum CrossProcessFrameHarness: FuzzHarness {
    package static let targetName = "fuzz-cross-process-frame"

    package static func run(_ bytes: UnsafeRawBufferPointer) throws(InvariantViolation) {
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
        var seeds = frames.map { FuzzSeed($0.0, $0.1.encoded()) }
        // Edge cases: a header only, a length that runs past the record, two frames in one record.
        let header = CrossProcessFrame(kind: .message, components: [payload]).encoded()
        seeds.append(FuzzSeed("edge-truncated", Array(header.prefix(CrossProcessFrame.headerSize + 2))))
        var long = header
        long[CrossProcessFrame.headerSize] = 0xFF
        seeds.append(FuzzSeed("edge-length-past-end", long))
        seeds.append(FuzzSeed("edge-two-frames", CrossProcessFrame(kind: .closing).encoded() + CrossProcessFrame(kind: .descriptors).encoded()))
        seeds.append(FuzzSeed("edge-empty", []))
        return seeds
    }
}

extension Result {
    var isSuccess: Bool { if case .success = self { true } else { false } }
    var isFailure: Bool { !isSuccess }
}
