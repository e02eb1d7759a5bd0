import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Waits until `condition` holds, looking every millisecond, for at most `seconds` (a bound
/// against hangs: the condition, not the time, is what the test waits for). Returns whether it
/// held.
///
/// Thread-safety: calls `condition` on the calling thread only.
public func eventually(seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if condition() { return true }
        usleep(1000)
    }
    return condition()
}
