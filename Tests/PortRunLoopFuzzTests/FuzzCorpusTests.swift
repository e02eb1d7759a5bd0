import Foundation
import PortRunLoopFuzzHarness
import PortRunLoopFuzzSupport
import Testing

/// The committed corpus of every fuzz target (Tests/Fuzz/Corpus/<target>/) replayed through the
/// target's check in the normal build: every file keeps passing, every target has a corpus, and
/// the corpus holds every seed the target's generator makes today (regenerate with
/// `Scripts/fuzz.sh seeds`).
@Suite(.timeLimit(.minutes(1)))
struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus").path

    @Test(arguments: FuzzHarnesses.all.map { $0.targetName })
    func corpusReplaysThroughTheCheck(_ target: String) throws {
        let harness = try #require(FuzzHarnesses.all.first { $0.targetName == target })
        let files = FuzzDriver.inputFiles(at: Self.corpus + "/" + target)
        #expect(files.count >= 5, "the corpus of \(target) has \(files.count) files")
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
            var violation: InvariantViolation?
            do throws(InvariantViolation) { try harness.run(bytes) } catch { violation = error }
            #expect(violation == nil, "\(file): \(violation?.description ?? "")")
        }
    }

    @Test(arguments: FuzzHarnesses.all.map { $0.targetName })
    func corpusHoldsTheCurrentSeeds(_ target: String) throws {
        let harness = try #require(FuzzHarnesses.all.first { $0.targetName == target })
        for seed in harness.seeds() {
            let path = Self.corpus + "/" + target + "/" + seed.name
            let committed = FileManager.default.contents(atPath: path).map { [UInt8]($0) }
            #expect(committed == seed.bytes, "\(path) is missing or out of date")
        }
    }
}
