import CDBus
import Foundation
import PortRunLoopBus
import PortRunLoopDBus
import PortRunLoopFuzzSupport
import PortRunLoopRedis

/// `fuzz-property-list`: the userInfo mapping both transports share. The input builds a
/// ``BusValue`` tree (every D-Bus type, nesting, dictionaries keyed by any basic type, values
/// with no property-list form), as a peer's `a{s…}` arrives.
///
/// The check: ``PropertyListCoding/decode(userInfo:)`` gives a property list or nil, never a
/// trap; its fields (``BusFields/init(decodedPropertyList:)``) and their property list are a fixed
/// point; encoding the property list again gives the same one back, or the typed error; and both
/// transports' writers and readers (the Redis binary payload, the D-Bus signal) carry the
/// userInfo unchanged.
package enum PropertyListHarness: FuzzHarness {
    package static let targetName = "fuzz-property-list"

    package static func run(_ bytes: UnsafeRawBufferPointer) throws(InvariantViolation) {
        var input = FuzzInput(bytes)
        let value = userInfo(&input)
        guard let decoded = PropertyListCoding.decode(userInfo: value) else { return }
        let text = CanonicalText.of(decoded)
        let fields = BusFields(decodedPropertyList: decoded)
        let once = fields.propertyList
        let twice = BusFields(decodedPropertyList: once).propertyList
        try require(CanonicalText.of(twice) == CanonicalText.of(once), "fields of fields: \(CanonicalText.of(once)) became \(CanonicalText.of(twice))")
        let encoded: Result<BusValue, BusNotificationError>
        do throws(BusNotificationError) { encoded = .success(try PropertyListCoding.encode(userInfo: decoded)) } catch { encoded = .failure(error) }
        switch encoded {
        case .success(let value):
            let back = PropertyListCoding.decode(userInfo: value)
            try require(back.map(CanonicalText.of) == text, "encode and decode: \(text) became \(back.map(CanonicalText.of) ?? "nil")")
        case .failure(.unsupportedUserInfoValue):
            break // a dictionary keyed by something else than strings has no property-list form to post
        case .failure(let error):
            throw InvariantViolation("encoding a decoded userInfo threw \(error)")
        }
        try transports(decoded, fields: fields)
    }

    /// Both transports carry the userInfo, posted as a property list and as fields.
    private static func transports(_ userInfo: [AnyHashable: Any], fields: BusFields) throws(InvariantViolation) {
        for envelope in [NotificationEnvelope(name: "fuzz", object: nil, userInfo: userInfo, deliverImmediately: false),
                         NotificationEnvelope(name: "fuzz", object: nil, fields: fields, deliverImmediately: false)] {
            let expected = CanonicalText.of(fields: envelope.fields.flatMap { $0.isEmpty ? nil : $0 })
            if let binary = try? RedisPayloadHarness.binaryPayload(of: envelope) {
                var names = RedisChannelNaming.NameCache()
                let read = Array(RedisPayloadHarness.channel.utf8).withUnsafeBytes { channel in
                    binary.withUnsafeBytes { RedisWireFormat.envelope(channel: channel, payload: $0, names: &names) }
                }
                guard case .success(let received) = read else { throw InvariantViolation("the Redis payload written is refused: \(read)") }
                try require(CanonicalText.of(fields: received.fields) == expected,
                            "over Redis: \(expected) became \(CanonicalText.of(fields: received.fields))")
            }
            if let message = try? NotificationSignalWriter.message(for: envelope) {
                defer { dbus_message_unref(message) }
                // As a peer receives it: marshalled, then validated and demarshalled by libdbus.
                let bytes = DBusSignalHarness.marshal(message)
                var error = DBusError()
                dbus_error_init(&error)
                let demarshalled = bytes.withUnsafeBytes { raw in
                    dbus_message_demarshal(raw.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(raw.count), &error)
                }
                guard let arrived = demarshalled else {
                    let why = error.message.map { String(cString: $0) } ?? "?"
                    dbus_error_free(&error)
                    throw InvariantViolation("the D-Bus signal written for a userInfo is refused by libdbus' validation: \(why)")
                }
                defer { dbus_message_unref(arrived) }
                guard case .success(let received) = NotificationSignalReader.envelope(from: arrived) else {
                    throw InvariantViolation("the D-Bus signal written is refused")
                }
                try require(CanonicalText.of(fields: received.fields) == expected,
                            "over D-Bus: \(expected) became \(CanonicalText.of(fields: received.fields))")
            }
        }
    }

    /// A userInfo property list made of `bytes` (as ``run(_:)`` makes one; nil when the value the
    /// bytes build has no property-list form): what split tests post from seeded random bytes.
    package static func userInfo(from bytes: [UInt8]) -> [AnyHashable: Any]? {
        bytes.withUnsafeBytes { raw in
            var input = FuzzInput(raw)
            return PropertyListCoding.decode(userInfo: userInfo(&input))
        }
    }

    /// The top-level value: mostly an `a{sv}` or `a{s<type>}` dictionary, sometimes anything.
    private static func userInfo(_ input: inout FuzzInput) -> BusValue {
        let shape = input.byte()
        guard shape < 224 else { return value(&input, depth: 0) }
        let count = input.count(upTo: 8)
        let valueKind = shape % 2 == 0 ? nil : input.byte()
        let entries = (0..<count).map { _ in
            BusDictionaryEntry(key: .string(input.string(upTo: 16)),
                               value: valueKind.map { kind(kind: $0, &input, depth: 1) } ?? .variant(value(&input, depth: 1)))
        }
        return .dictionary(keySignature: "s", valueSignature: "v", entries)
    }

    private static let maximumDepth = 80 // past both transports' limits (Redis 64, D-Bus 32 containers)

    private static func value(_ input: inout FuzzInput, depth: Int) -> BusValue {
        kind(kind: input.byte(), &input, depth: depth)
    }

    /// A value of the kind `kind` picks (containers only above ``maximumDepth``).
    private static func kind(kind: UInt8, _ input: inout FuzzInput, depth: Int) -> BusValue {
        let containers = depth < maximumDepth
        switch kind % (containers ? 19 : 14) {
        case 0: return .string(input.string(upTo: 24))
        case 1: return .objectPath("/" + input.string(upTo: 8))
        case 2: return .signature(input.string(upTo: 4))
        case 3: return .bool(input.byte() & 1 == 1)
        case 4: return .byte(input.byte())
        case 5: return .int16(input.integer())
        case 6: return .uint16(input.integer())
        case 7: return .int32(input.integer())
        case 8: return .uint32(input.integer())
        case 9: return .int64(input.integer())
        case 10: return .uint64(input.integer())
        case 11: return .double(Double(bitPattern: input.integer()))
        case 12: return .bytes(Data(input.bytes(upTo: 32)))
        case 13: return .unsupported("h")
        case 14: return .variant(value(&input, depth: depth + 1))
        case 15: return .array(elementSignature: "v", (0..<input.count(upTo: 6)).map { _ in value(&input, depth: depth + 1) })
        case 16: return .structure((0..<input.count(upTo: 4)).map { _ in value(&input, depth: depth + 1) })
        case 17:
            return .dictionary(keySignature: "s", valueSignature: "v", (0..<input.count(upTo: 5)).map { _ in
                BusDictionaryEntry(key: .string(input.string(upTo: 12)), value: value(&input, depth: depth + 1))
            })
        default:
            // Keyed by another basic type (a peer's `a{iv}`, `a{dv}`, `a{yv}`).
            let keyKind = [UInt8(7), 11, 4, 3, 10][Int(input.byte()) % 5]
            return .dictionary(keySignature: "x", valueSignature: "v", (0..<input.count(upTo: 5)).map { _ in
                BusDictionaryEntry(key: self.kind(kind: keyKind, &input, depth: maximumDepth), value: value(&input, depth: depth + 1))
            })
        }
    }

    package static func seeds() -> [FuzzSeed] {
        var seeds: [FuzzSeed] = [
            FuzzSeed("empty", []),
            FuzzSeed("scalars", [0, 6, 1, 0x61, 0, 3, 0x61, 0x62, 0x63, 1, 0x62, 4, 7, 1, 0x63, 9, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F,
                                 1, 0x64, 10, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1, 0x65, 11, 0, 0, 0, 0, 0, 0, 0xF8, 0x7F,
                                 1, 0x66, 12, 3, 0, 1, 2]),
            FuzzSeed("nested", [0, 3, 1, 0x6E, 15, 3, 14, 0, 2, 0x68, 0x69, 17, 1, 1, 0x6B, 16, 2, 3, 1, 4, 9,
                                1, 0x6D, 18, 0, 2, 3, 4, 5, 6, 0, 1, 0x7A, 1, 0x75, 13]),
            FuzzSeed("typed-values", [1, 2, 7, 1, 0x61, 1, 0, 0, 0, 1, 0x62, 0xFF, 0xFF, 0xFF, 0xFF]),
            FuzzSeed("not-a-dictionary", [0xF0, 15, 2, 0, 1, 0x41, 5, 1, 0]),
        ]
        seeds.append(FuzzSeed("deep", [0, 1, 1, 0x64] + Array(repeating: 14, count: 8) + [0, 1, 0x78]))
        return seeds
    }
}
