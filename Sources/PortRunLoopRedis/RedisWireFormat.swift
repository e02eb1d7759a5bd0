import Foundation
import PortRunLoopBus

/// The payloads of notifications on their Redis channels (<doc:RedisNotifications>, "Payload").
///
/// Received payloads are read by their first byte: ``RedisBinaryPayload/formatByte`` is the binary
/// form centers post (``RedisBinaryPayload``); anything else is read as the JSON envelope that
/// other programs (`redis-cli`, scripts) post, and that a center posts with
/// ``RedisPayloadFormat/json``: one JSON object, UTF-8,
///
///     {"v":1,"name":"com.example.changed","object":"doc-7","deliverImmediately":false,
///      "sender":"host:4242:1a2b3c4d","userInfo":{"count":{"int":3}}}
///
/// `v` (1) and `name` are required; `name` must be the name the channel stands for; `object`,
/// `deliverImmediately` (false), `sender` and `userInfo` (values tagged as ``RedisWireValue``
/// documents) may be left out. Anything else is a malformed notification: dropped and counted.
///
/// Thread-safety: a stateless namespace.
package enum RedisWireFormat {
    static let version = 1

    struct Envelope: Codable {
        var v: Int
        var name: String
        var object: String?
        var deliverImmediately: Bool?
        var sender: String?
        var userInfo: [String: RedisWireValue]?
    }

    private static let floatStrategy = (positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")

    /// The payload for `envelope`, posted by `sender`; a userInfo value with no property-list form
    /// throws the same typed error the D-Bus transport does.
    package static func payload(for envelope: NotificationEnvelope, sender: String) throws(BusNotificationError) -> Data {
        var userInfo: [String: RedisWireValue]?
        if let info = envelope.userInfo, !info.isEmpty {
            let encoded = try PropertyListCoding.encode(userInfo: info)
            guard case .dict(let entries)? = RedisWireValue(encoded) else {
                throw .unsupportedUserInfoValue(keyPath: "", type: "userInfo")
            }
            // The binary form's bound, so that both forms carry the same notifications.
            guard RedisWireValue.nestsWithinLimit(entries) else {
                throw .unsupportedUserInfoValue(keyPath: "", type: "a value nested deeper than \(RedisBinaryPayload.maximumDepth) containers")
            }
            userInfo = entries
        }
        let wire = Envelope(v: version, name: envelope.name, object: envelope.object,
                            deliverImmediately: envelope.deliverImmediately ? true : nil, sender: sender, userInfo: userInfo)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: floatStrategy.positiveInfinity,
                                                                      negativeInfinity: floatStrategy.negativeInfinity,
                                                                      nan: floatStrategy.nan)
        do {
            return try encoder.encode(wire)
        } catch {
            throw .unsupportedUserInfoValue(keyPath: "", type: "not encodable as JSON: \(error)")
        }
    }

    /// A received message on `channel`: the envelope, or why it is not one (`names` keeps the
    /// last channel's name).
    package static func envelope(channel: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer,
                         names: inout RedisChannelNaming.NameCache) -> Result<NotificationEnvelope, MalformedPayload> {
        guard let name = names.name(ofChannel: channel) else {
            return .failure(.channel(String(decoding: channel, as: UTF8.self)))
        }
        guard !name.isEmpty else { return .failure(.emptyName) }
        if payload.first == RedisBinaryPayload.formatByte {
            return RedisBinaryPayload.Reader.envelope(name: name, payload: payload)
        }
        guard payload.count <= RedisBinaryPayload.maximumSize else {
            return .failure(.notAnEnvelope("\(payload.count) bytes, more than \(RedisBinaryPayload.maximumSize)"))
        }
        return envelope(json: Data(payload), name: name)
    }

    /// A JSON envelope for the notification `name` (the channel's).
    private static func envelope(json payload: Data, name channelName: String) -> Result<NotificationEnvelope, MalformedPayload> {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: floatStrategy.positiveInfinity,
                                                                        negativeInfinity: floatStrategy.negativeInfinity,
                                                                        nan: floatStrategy.nan)
        let wire: Envelope
        do {
            wire = try decoder.decode(Envelope.self, from: payload)
        } catch {
            return .failure(.notAnEnvelope(Self.summary(of: error)))
        }
        guard wire.v == version else { return .failure(.version(wire.v)) }
        guard !wire.name.isEmpty else { return .failure(.emptyName) }
        guard wire.name == channelName else { return .failure(.nameMismatch(name: wire.name, channel: RedisChannelNaming.channel(for: channelName))) }
        var userInfo: [AnyHashable: Any]?
        if let entries = wire.userInfo, !entries.isEmpty {
            guard RedisWireValue.nestsWithinLimit(entries) else {
                return .failure(.notAnEnvelope("userInfo nested deeper than \(RedisBinaryPayload.maximumDepth) containers"))
            }
            guard let decoded = PropertyListCoding.decode(userInfo: RedisWireValue.dictionary(entries)) else {
                return .failure(.notAnEnvelope("userInfo"))
            }
            userInfo = decoded
        }
        let object = wire.object.flatMap { $0.isEmpty ? nil : $0 }
        return .success(NotificationEnvelope(name: wire.name, object: object, userInfo: userInfo,
                                             deliverImmediately: wire.deliverImmediately ?? false))
    }

    private static func summary(of error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context): "not JSON or not valid (\(context.debugDescription))"
        case DecodingError.keyNotFound(let key, _): "missing \"\(key.stringValue)\""
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "wrong type at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        default: "\(error)"
        }
    }
}

/// Why a message on a notification channel was not a notification.
///
/// Thread-safety: a value type.
package enum MalformedPayload: Error, CustomStringConvertible {
    case channel(String)
    case notAnEnvelope(String)
    case version(Int)
    case emptyName
    case nameMismatch(name: String, channel: String)
    case binary(String)
    /// A `message` or `pmessage` push whose channel or payload is not a string.
    case unreadablePush(kind: String)

    package var description: String {
        switch self {
        case .channel(let channel): "channel \(channel) is not a notification channel"
        case .notAnEnvelope(let why): "the payload is not a notification envelope: \(why)"
        case .version(let v): "envelope version \(v) is not 1"
        case .emptyName: "its name is empty"
        case .nameMismatch(let name, let channel): "its name \(name) is not the one channel \(channel) carries"
        case .binary(let why): "the binary payload is malformed: \(why)"
        case .unreadablePush(let kind): "a \(kind) push without a channel and payload as strings"
        }
    }
}
