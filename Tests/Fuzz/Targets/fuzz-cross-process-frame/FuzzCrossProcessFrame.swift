import PortRunLoopFuzzHarness
import PortRunLoopFuzzSupport

#if FUZZING
/// libFuzzer's entry: one input through the fuzz-cross-process-frame check.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzDriver.fuzz(data, size, CrossProcessFrameHarness.self)
}
#endif

/// `fuzz-cross-process-frame`: libFuzzer on the cross-process-frame decoders (built with -DFUZZING), or a replay of files.
@main
enum FuzzCrossProcessFrame {
    static func main() { FuzzDriver.main(CrossProcessFrameHarness.self) }
}
