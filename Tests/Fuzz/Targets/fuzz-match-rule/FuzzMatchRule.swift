import PortRunLoopFuzzHarness
import PortRunLoopFuzzSupport

#if FUZZING
/// libFuzzer's entry: one input through the fuzz-match-rule check.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzDriver.fuzz(data, size, MatchRuleHarness.self)
}
#endif

/// `fuzz-match-rule`: libFuzzer on the match-rule decoders (built with -DFUZZING), or a replay of files.
@main
enum FuzzMatchRule {
    static func main() { FuzzDriver.main(MatchRuleHarness.self) }
}
