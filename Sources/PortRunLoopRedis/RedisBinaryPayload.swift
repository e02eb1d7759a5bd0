/// The binary payload a center posts (<doc:RedisNotifications>, "Payload"), little-endian
/// throughout:
///
///     u8   format      0xB1: binary, version 1 (a JSON envelope starts with `{` or white space)
///     u8   flags       bit 0: deliverImmediately; bit 1: an object follows; other bits 0
///     str  sender      the posting center's uniqueName
///     str  object      only with flag bit 1
///     u32  count       userInfo entries (0: no userInfo)
///     count × (str key, value)
///
/// `str` is a u32 byte count and that many bytes of UTF-8. A value is a tag byte and its body
/// (``Tag``). The notification's name is not repeated: it is the channel's. The payload ends
/// exactly after the last entry, is at most ``maximumSize`` bytes, and nests containers at most
/// ``maximumDepth`` deep; anything else is malformed (``RedisBinaryPayload/Reader``).
///
/// Thread-safety: a stateless namespace.
package enum RedisBinaryPayload {
    /// The first byte of a binary payload, version 1.
    package static let formatByte: UInt8 = 0xB1
    /// The largest payload posted or accepted (Redis' default pub/sub output-buffer hard limit is
    /// 32 MB: a larger message could never reach a subscriber).
    package static let maximumSize = 16 << 20
    /// The deepest nesting of arrays and dictionaries inside userInfo.
    package static let maximumDepth = 64

    /// Flag bits of the second byte.
    enum Flag {
        static let deliverImmediately: UInt8 = 0x01
        static let hasObject: UInt8 = 0x02
        static let known: UInt8 = 0x03
    }

    /// The type tag in front of each value.
    enum Tag {
        /// u32 length, UTF-8 bytes → `String`.
        static let string: UInt8 = 0x01
        /// 8 bytes, two's complement → `Int`.
        static let int: UInt8 = 0x02
        /// 8 bytes, unsigned → `Int` when it fits, else `UInt64`.
        static let uint: UInt8 = 0x03
        /// 8 bytes, IEEE 754 binary64 → `Double`.
        static let double: UInt8 = 0x04
        /// no body → `false`.
        static let `false`: UInt8 = 0x05
        /// no body → `true`.
        static let `true`: UInt8 = 0x06
        /// u32 length, bytes → `Data`.
        static let data: UInt8 = 0x07
        /// u32 count, count values → `[Any]`.
        static let array: UInt8 = 0x08
        /// u32 count, count × (str key, value) → `[String: Any]`.
        static let dictionary: UInt8 = 0x09
    }
}
