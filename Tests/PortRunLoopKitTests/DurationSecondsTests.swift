@testable import PortRunLoopKit
import Testing

/// `Duration.seconds`, the conversion every timeout of the library goes through (`performAndWait`,
/// `postAndWait`, a request's send and receive timeouts): it must agree with the seconds and
/// attoseconds of `components` across the whole range, both signs and both 64-bit halves of the
/// attosecond count.
@Suite(.timeLimit(.minutes(1))) struct DurationSecondsTests {
    /// What `components` says, in seconds (the reference the fast conversion must match).
    private static func reference(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    @Test(arguments: [
        Duration.zero, .nanoseconds(1), .microseconds(250), .milliseconds(1), .milliseconds(250),
        .seconds(1), .seconds(5), .seconds(9), .seconds(10), .seconds(86_400 * 365),
        .seconds(Int64.max), .seconds(Int64.max) + .nanoseconds(999_999_999),
        .seconds(-1), .milliseconds(-250), .seconds(-86_400), .seconds(Int64.min),
    ])
    func agreesWithComponents(_ duration: Duration) {
        let fast = duration.seconds
        let expected = Self.reference(duration)
        #expect(abs(fast - expected) <= abs(expected) * 1e-15, "\(duration): \(fast) against \(expected)")
    }

    @Test func isExactForWholeAndDecimalTimeouts() {
        #expect(Duration.seconds(5).seconds == 5)
        #expect(Duration.milliseconds(250).seconds == 0.25)
        #expect(Duration.seconds(-7).seconds == -7)
        #expect(Duration.zero.seconds == 0)
    }

    @Test func keepsTheSignOfTinyNegativeDurations() {
        // A negative count's low half alone is near 2^64; the magnitude is converted instead.
        let tiny = Duration.nanoseconds(-3).seconds
        #expect(tiny < 0)
        #expect(abs(tiny + 3e-9) <= 3e-9 * 1e-15)
    }
}
