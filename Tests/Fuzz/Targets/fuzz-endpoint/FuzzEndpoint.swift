import PortRunLoopFuzzHarness
import PortRunLoopFuzzSupport

#if FUZZING
/// libFuzzer's entry: one input through the fuzz-endpoint check.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzDriver.fuzz(data, size, EndpointHarness.self)
}
#endif

/// `fuzz-endpoint`: libFuzzer on the endpoint decoders (built with -DFUZZING), or a replay of files.
@main
enum FuzzEndpoint {
    static func main() { FuzzDriver.main(EndpointHarness.self) }
}
