import Foundation
import PortRunLoopKit
import Testing

/// The publisher's parameters a client reads from a port name's lock file: exactly the line a
/// publisher writes, or nothing (found by `fuzz-endpoint`: `PRLX 3 +7295 36` was read as 7295
/// credits, a line no publisher writes).
@Suite(.timeLimit(.minutes(1)))
struct PublisherParametersTests {
    @Test func theLinePublishersWriteIsRead() {
        for (credits, size) in [(1, 36), (64, 1 << 20), (Int(UInt32.max), Int.max)] {
            let parameters = PublisherParameters(credits: credits, maximumFrameSize: size)
            #expect(PublisherParameters(parameters.encoded) == parameters)
        }
    }

    @Test func numbersNotInPlainDecimalAreRefused() {
        // The fuzzer's input (Tests/Fuzz/Corpus/fuzz-endpoint/crash-8dabe483…).
        #expect(PublisherParameters(Array("PRLX 3 +7295 36\n".utf8)) == nil)
        for line in ["PRLX 3 07295 36\n", "PRLX 3 7295 036\n", "PRLX 3 -1 36\n", "PRLX 3 7295 +36\n", "PRLX 3  7295 36\n",
                     "PRLX 3 7295 36 \n", "PRLX 3 7295 36", "PRLX 3 0 36\n", "PRLX 3 7295 35\n", "PRLX 3 ７ 36\n",
                     "PRLX 3 4294967296 36\n", "PRLX 3 1 99999999999999999999\n"] {
            #expect(PublisherParameters(Array(line.utf8)) == nil, "\(line.debugDescription)")
        }
        #expect(PublisherParameters(Array("PRLX 3 7295 36\n".utf8)) == PublisherParameters(credits: 7295, maximumFrameSize: 36))
    }
}
