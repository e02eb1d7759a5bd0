import PortRunLoopFuzzHarness
import PortRunLoopFuzzSupport

#if FUZZING
/// libFuzzer's entry: one input through the fuzz-property-list check.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzDriver.fuzz(data, size, PropertyListHarness.self)
}
#endif

/// `fuzz-property-list`: libFuzzer on the property-list decoders (built with -DFUZZING), or a replay of files.
@main
enum FuzzPropertyList {
    static func main() { FuzzDriver.main(PropertyListHarness.self) }
}
