import PortRunLoopFuzzHarness
import PortRunLoopFuzzSupport

#if FUZZING
/// libFuzzer's entry: one input through the fuzz-redis-payload check.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzDriver.fuzz(data, size, RedisPayloadHarness.self)
}
#endif

/// `fuzz-redis-payload`: libFuzzer on the redis-payload decoders (built with -DFUZZING), or a replay of files.
@main
enum FuzzRedisPayload {
    static func main() { FuzzDriver.main(RedisPayloadHarness.self) }
}
