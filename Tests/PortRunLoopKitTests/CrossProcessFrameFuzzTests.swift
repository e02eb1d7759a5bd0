import Foundation
@testable import PortRunLoopKit
import PortRunLoopStressEngine
import Testing

/// The wire-format parser against a seeded random corpus: valid frames round-trip; mutations,
/// truncations, extensions and huge lengths never trap and always give a typed outcome (a frame,
/// or a ``FrameError``) that is consistent with the bytes (X4).
struct CrossProcessFrameFuzzTests {
    private func randomFrame(_ random: inout SeededGenerator) -> CrossProcessFrame {
        let kinds: [CrossProcessFrame.Kind] = [.message, .credit, .reply, .routed, .closing, .descriptors]
        let kind = kinds[Int.random(in: 0..<kinds.count, using: &random)]
        switch kind {
        case .credit:
            return CrossProcessFrame(kind: .credit, firstID: UInt64.random(in: 1...1000, using: &random))
        case .closing, .descriptors:
            return CrossProcessFrame(kind: kind)
        case .message:
            let request = Bool.random(using: &random)
            let route = Bool.random(using: &random)
            var flags: CrossProcessFrame.Flags = []
            if request { flags.insert(.request) }
            if route { flags.insert(.replyRoute) }
            return CrossProcessFrame(kind: .message, flags: flags, msgid: UInt32.random(in: 0...UInt32.max, using: &random),
                                     firstID: request ? UInt64.random(in: 1...UInt64.max, using: &random) : 0,
                                     secondID: route ? UInt64.random(in: 1...UInt64.max, using: &random) : 0,
                                     components: randomComponents(&random))
        case .reply, .routed:
            return CrossProcessFrame(kind: kind, msgid: UInt32.random(in: 0...UInt32.max, using: &random),
                                     firstID: UInt64.random(in: 0...UInt64.max, using: &random), components: randomComponents(&random))
        }
    }

    private func randomComponents(_ random: inout SeededGenerator) -> [Data] {
        (0..<Int.random(in: 0...4, using: &random)).map { _ in
            Data((0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
        }
    }

    private func parse(_ bytes: [UInt8]) -> Result<CrossProcessFrame, FrameError> {
        bytes.withUnsafeBytes { bytes in
            do throws(FrameError) { return .success(try CrossProcessFrame.parse(bytes)) } catch { return .failure(error) }
        }
    }

    @Test func validFramesRoundTrip() {
        var random = SeededGenerator(seed: 0x5052_4C58)
        for _ in 0..<2_000 {
            let frame = randomFrame(&random)
            let bytes = frame.encoded()
            #expect(bytes.count == CrossProcessFrame.encodedSize(of: frame.components))
            #expect(parse(bytes) == .success(frame))
        }
    }

    @Test func mutatedTruncatedAndExtendedFramesGiveATypedOutcome() {
        var random = SeededGenerator(seed: 20_261_123)
        var refused = 0
        var accepted = 0
        for round in 0..<20_000 {
            var bytes = randomFrame(&random).encoded()
            switch round % 5 {
            case 0: // flip random bytes
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
                }
            case 1: // truncate
                bytes.removeLast(Int.random(in: 1...bytes.count, using: &random))
            case 2: // extend
                bytes += (0..<Int.random(in: 1...16, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            case 3: // a huge component count or length
                let table = CrossProcessFrame.headerSize
                if Bool.random(using: &random) || bytes.count < table + 4 {
                    bytes.replaceSubrange(12..<16, with: [0xFF, 0xFF, 0xFF, UInt8.random(in: 0...255, using: &random)])
                } else {
                    bytes.replaceSubrange(table..<(table + 4), with: [0xFF, 0xFF, 0xFF, 0xFF])
                }
            default: // random bytes behind a valid magic and version
                bytes = CrossProcessFrame.magic + [CrossProcessFrame.version]
                    + (0..<Int.random(in: 0...64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            }
            switch parse(bytes) {
            case .success(let frame):
                // Whatever was accepted is exactly what its bytes say: it encodes back to them.
                #expect(frame.encoded() == bytes)
                accepted += 1
            case .failure:
                refused += 1
            }
        }
        #expect(refused > 15_000)
        // Some mutations (a flipped payload byte, a changed msgid) leave a valid frame: the
        // round-trip check above must have run on them.
        #expect(accepted > 0)
    }

    @Test func hugeLengthsAreRefusedWithoutReadingPastTheFrame() {
        var frame = CrossProcessFrame(kind: .message, components: [Data([1, 2, 3])]).encoded()
        let table = CrossProcessFrame.headerSize
        frame.replaceSubrange(table..<(table + 4), with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(parse(frame) == .failure(.lengthMismatch(expected: table + 4 + Int(UInt32.max), actual: frame.count)))
        var counted = CrossProcessFrame(kind: .message).encoded()
        counted.replaceSubrange(12..<16, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(parse(counted) == .failure(.tooManyComponents(UInt32.max)))
        #expect(parse([]) == .failure(.tooShort(0)))
    }
}
