import CDBus
import Foundation
import PortRunLoopDBus
import PortRunLoopFuzzHarness
import PortRunLoopFuzzSupport
import Testing

/// Notification signals, marshalled back to back as they arrive on a bus connection, fed whole,
/// one byte at a time and at seeded random points: libdbus cuts the same messages out of the
/// stream and the center reads the same notifications from them, in order.
@Suite(.timeLimit(.minutes(1)))
struct DBusMessageSplitTests {
    @Test func signalsFedInAnyPiecesGiveTheSameNotifications() throws {
        var random = SplitMix64(seed: 0x4442_5553)
        var written = 0
        for _ in 0..<30 {
            var stream: [UInt8] = []
            var expected: [String] = []
            for _ in 0..<Int.random(in: 1...5, using: &random) {
                let envelope = SeedEnvelopes.random(name: "com.example.split", using: &random)
                // A string holding a NUL has no D-Bus form (the writer refuses it, typed).
                guard let message = try? NotificationSignalWriter.message(for: envelope) else { continue }
                defer { dbus_message_unref(message) }
                written += 1
                stream += DBusSignalHarness.marshal(message)
                expected.append("envelope " + envelope.canonicalText)
            }
            let plans = [[], ByteSplits.oneByteAtATime(stream.count)] + (0..<3).map { _ in ByteSplits.randomCuts(stream.count, using: &random) }
            for cuts in plans {
                let outcomes = stream.withUnsafeBytes { whole in
                    Result { () throws(InvariantViolation) in try DBusSignalHarness.read(ByteSplits.pieces(of: whole, cuts: cuts)) }
                }
                #expect(try outcomes.get() == expected, "in \(cuts.count + 1) pieces")
            }
        }
        #expect(written > 50)
    }
}
