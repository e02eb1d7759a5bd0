import CDBus
import Foundation
import PortRunLoopBus
import PortRunLoopDBus
import PortRunLoopFuzzSupport

/// `fuzz-dbus-signal`: what a D-Bus center reads from the bus. The input is marshalled D-Bus
/// messages, back to back, as they arrive on the connection: libdbus cuts the stream into
/// messages (`dbus_message_demarshal_bytes_needed`) and demarshals each (`dbus_message_demarshal`,
/// libdbus' own validation), and the center reads each message as a notification
/// (``NotificationSignalReader``) and as a signal's arguments (``DBusMessageReader``).
///
/// The check, per message: the two readers agree (a notification's name, object and userInfo are
/// its first three arguments, as ``PropertyListCoding`` decodes them); a notification read is
/// written again by ``NotificationSignalWriter`` and read back the same. The stream is fed whole,
/// one byte at a time and in random pieces: every way gives the same outcomes in order.
package enum DBusSignalHarness: FuzzHarness {
    package static let targetName = "fuzz-dbus-signal"

    package static func run(_ bytes: UnsafeRawBufferPointer) throws(InvariantViolation) {
        var expected: [String]?
        for cuts in ByteSplits.plans(for: bytes) {
            let outcomes = try read(ByteSplits.pieces(of: bytes, cuts: cuts))
            if let expected {
                try require(outcomes == expected, "fed in \(cuts.count + 1) pieces: \(outcomes) instead of \(expected)")
            } else {
                expected = outcomes
            }
        }
    }

    /// The outcome of each message the pieces make, as text (and the stream's error, if any).
    package static func read(_ pieces: [UnsafeRawBufferPointer]) throws(InvariantViolation) -> [String] {
        var buffer: [UInt8] = []
        var outcomes: [String] = []
        for piece in pieces {
            buffer += piece
            while buffer.count >= 16 {
                let needed = buffer.withUnsafeBytes { raw in
                    dbus_message_demarshal_bytes_needed(raw.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(clamping: raw.count))
                }
                guard needed >= 0 else {
                    outcomes.append("stream error")
                    return outcomes
                }
                // 0: the header cannot tell yet; more than there is: the rest is on its way.
                guard needed > 0, Int(needed) <= buffer.count else { break }
                outcomes.append(try message(Array(buffer.prefix(Int(needed)))))
                buffer.removeFirst(Int(needed))
            }
        }
        return outcomes
    }

    /// One message's outcome.
    static func message(_ bytes: [UInt8]) throws(InvariantViolation) -> String {
        var error = DBusError()
        dbus_error_init(&error)
        let demarshalled = bytes.withUnsafeBytes { raw in
            dbus_message_demarshal(raw.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(raw.count), &error)
        }
        guard let message = demarshalled else {
            dbus_error_free(&error)
            return "refused by libdbus"
        }
        defer { dbus_message_unref(message) }
        let arguments = DBusMessageReader.arguments(of: message)
        switch NotificationSignalReader.envelope(from: message) {
        case .failure(let reason):
            return "malformed \(reason) \(arguments.count) arguments"
        case .success(let envelope):
            try agree(envelope, arguments)
            try roundTrip(envelope)
            return "envelope " + envelope.canonicalText
        }
    }

    /// The notification reader and the arguments reader agree.
    private static func agree(_ envelope: NotificationEnvelope, _ arguments: [BusValue]) throws(InvariantViolation) {
        try require(arguments.count >= 2, "a notification of \(arguments.count) arguments")
        try require(arguments[0] == .string(envelope.name), "name \(envelope.name) but first argument \(arguments[0])")
        try require(arguments[1] == .string(envelope.object ?? ""), "object \(envelope.object ?? "nil") but second argument \(arguments[1])")
        let userInfo = arguments.count > 2 ? PropertyListCoding.decode(userInfo: arguments[2]) : nil
        let fromArguments = userInfo.flatMap { $0.isEmpty ? nil : $0 }
        try require(CanonicalText.of(userInfo: fromArguments) == CanonicalText.of(userInfo: envelope.userInfo),
                    "userInfo \(CanonicalText.of(userInfo: envelope.userInfo)) but arguments decode to \(CanonicalText.of(userInfo: fromArguments))")
        if arguments.count > 3 {
            try require(arguments[3] == .bool(envelope.deliverImmediately), "deliverImmediately \(envelope.deliverImmediately) but \(arguments[3])")
        }
    }

    /// Written again by the writer, the notification reads back the same; or, when its userInfo
    /// nests too deep to post (a structure read becomes an `av` in a variant: two containers per
    /// level, where the structure took one), the writer refuses it with the typed error.
    private static func roundTrip(_ envelope: NotificationEnvelope) throws(InvariantViolation) {
        let written: OpaquePointer
        do throws(BusNotificationError) {
            written = try NotificationSignalWriter.message(for: envelope)
        } catch {
            if case .unsupportedUserInfoValue(_, let type) = error, type.contains("nested deeper") { return }
            throw InvariantViolation("a notification read from the bus cannot be written: \(error)")
        }
        defer { dbus_message_unref(written) }
        guard case .success(let again) = NotificationSignalReader.envelope(from: written) else {
            throw InvariantViolation("the signal written for a read notification is refused")
        }
        try require(again.canonicalText == envelope.canonicalText, "round trip: \(envelope.canonicalText) became \(again.canonicalText)")
    }

    package static func seeds() -> [FuzzSeed] {
        var seeds: [FuzzSeed] = []
        for (index, envelope) in SeedEnvelopes.all(name: "com.example.fuzz").enumerated() {
            guard let message = try? NotificationSignalWriter.message(for: envelope) else { continue }
            defer { dbus_message_unref(message) }
            seeds.append(FuzzSeed("signal-\(index)", marshal(message)))
        }
        // Edge cases: other signatures a script can send, and two messages back to back.
        if let short = signal(arguments: ["only-name", ""]) { seeds.append(FuzzSeed("signal-ss", short)) }
        if let odd = signal(arguments: ["", "empty name"]) { seeds.append(FuzzSeed("signal-empty-name", odd)) }
        if seeds.count >= 2 { seeds.append(FuzzSeed("two-signals", seeds[0].bytes + seeds[1].bytes)) }
        return seeds
    }

    /// A `Posted` signal whose arguments are these strings.
    private static func signal(arguments: [String]) -> [UInt8]? {
        guard let message = dbus_message_new_signal("/org/portrunloop/Notifications", "org.portrunloop.DistributedNotification", "Posted") else {
            return nil
        }
        defer { dbus_message_unref(message) }
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(message, &iter)
        for argument in arguments {
            argument.withCString { text in
                var pointer: UnsafePointer<CChar>? = text
                _ = dbus_message_iter_append_basic(&iter, Int32(UInt8(ascii: "s")), &pointer)
            }
        }
        return marshal(message)
    }

    /// The message's bytes as they travel (`dbus_message_marshal`), with a serial set.
    package static func marshal(_ message: OpaquePointer) -> [UInt8] {
        dbus_message_set_serial(message, 1)
        var bytes: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(message, &bytes, &length) != 0, let bytes else { return [] }
        defer { dbus_free(bytes) }
        return Array(UnsafeRawBufferPointer(start: bytes, count: Int(length)))
    }
}
