import Foundation
import PortRunLoopFuzzHarness
import PortRunLoopFuzzSupport
import PortRunLoopKit
import Testing

/// Cross-process frames cut into records one byte at a time and at seeded random points: the
/// connection's `SOCK_SEQPACKET` records never need reassembly, so every record that is not a
/// whole frame (a frame's first piece, two frames in one record) is refused, never misread.
@Suite(.timeLimit(.minutes(1)))
struct CrossProcessFrameSplitTests {
    private func parses(_ bytes: UnsafeRawBufferPointer) -> Bool {
        (try? CrossProcessFrame.parse(bytes)) != nil
    }

    private func randomFrame(_ random: inout SplitMix64) -> CrossProcessFrame {
        let components = (0..<Int.random(in: 0...4, using: &random)).map { _ in
            Data((0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
        }
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return CrossProcessFrame(kind: .credit, firstID: UInt64.random(in: 1...1000, using: &random))
        case 1: return CrossProcessFrame(kind: .reply, msgid: .random(in: 0...UInt32.max, using: &random),
                                         firstID: .random(in: 0...UInt64.max, using: &random), components: components)
        default: return CrossProcessFrame(kind: .message, flags: .request, msgid: .random(in: 0...UInt32.max, using: &random),
                                          firstID: .random(in: 1...UInt64.max, using: &random), components: components,
                                          descriptorCount: .random(in: 0...3, using: &random))
        }
    }

    @Test func aFrameCutAnywhereIsRefused() {
        var random = SplitMix64(seed: 0x5350_4C49_5446)
        var pieces = 0
        for _ in 0..<400 {
            let bytes = randomFrame(&random).encoded()
            bytes.withUnsafeBytes { whole in
                #expect(parses(whole))
                let plans = [ByteSplits.oneByteAtATime(whole.count)] + (0..<3).map { _ in ByteSplits.randomCuts(whole.count, using: &random) }
                for cuts in plans where !cuts.isEmpty {
                    let cut = ByteSplits.pieces(of: whole, cuts: cuts)
                    #expect(!parses(cut[0]), "a frame's first \(cut[0].count) of \(whole.count) bytes")
                    pieces += cut.count
                }
            }
            #expect((bytes + bytes).withUnsafeBytes { !parses($0) })
        }
        #expect(pieces > 10_000)
    }

    @Test func theHarnessHoldsForSeededFramesAndMutations() {
        var random = SplitMix64(seed: 0x4652_414D_45)
        for round in 0..<300 {
            var bytes = randomFrame(&random).encoded()
            if round % 2 == 1 { bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random) }
            var violation: InvariantViolation?
            do throws(InvariantViolation) { try CrossProcessFrameHarness.run([0] + bytes) } catch { violation = error }
            #expect(violation == nil, "\(violation?.description ?? "")")
        }
    }
}
