import PortRunLoopFuzzHarness
import PortRunLoopFuzzSupport

#if FUZZING
/// libFuzzer's entry: one input through the fuzz-dbus-signal check.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzDriver.fuzz(data, size, DBusSignalHarness.self)
}
#endif

/// `fuzz-dbus-signal`: libFuzzer on the dbus-signal decoders (built with -DFUZZING), or a replay of files.
@main
enum FuzzDBusSignal {
    static func main() { FuzzDriver.main(DBusSignalHarness.self) }
}
