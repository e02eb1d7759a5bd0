import Foundation

/// The Redis channels notifications travel on (<doc:RedisNotifications>, "Channels"): one per
/// notification name, `portrunloop.notification.<name>` (the name's bytes as they are, Redis
/// channels being binary-safe); observing every name is a pattern subscription to
/// `portrunloop.notification.*`.
///
/// Thread-safety: a stateless namespace.
package enum RedisChannelNaming {
    /// The prefix as its bytes (written into commands without a string in between).
    static let prefixBytes: StaticString = "portrunloop.notification."
    package static let prefix = prefixBytes.description
    static let anyNamePattern = prefix + "*"

    package static func channel(for name: String) -> String { prefix + name }

    /// The notification name a channel's bytes carry (possibly empty), or nil for a channel outside
    /// the prefix or a name that is not UTF-8.
    package static func name(ofChannel channel: UnsafeRawBufferPointer) -> String? {
        let prefixLength = prefix.utf8.count
        guard channel.count >= prefixLength,
              prefix.utf8.elementsEqual(UnsafeRawBufferPointer(rebasing: channel[..<prefixLength])) else { return nil }
        return String(validating: UnsafeRawBufferPointer(rebasing: channel[prefixLength...]).assumingMemoryBound(to: UInt8.self),
                      as: UTF8.self)
    }

    /// The last channel seen and its name: a burst on one channel makes its name once.
    ///
    /// Thread-safety: a value type, used by one thread.
    package struct NameCache {
        private var channel: [UInt8] = []
        private var name: String?

        /// An empty cache.
        package init() {}

        /// ``RedisChannelNaming/name(ofChannel:)``, from the cache when `channel` is the last one.
        package mutating func name(ofChannel bytes: UnsafeRawBufferPointer) -> String? {
            if let name, channel.count == bytes.count, let other = bytes.baseAddress,
               channel.withUnsafeBytes({ memcmp($0.baseAddress!, other, bytes.count) == 0 }) {
                return name
            }
            let made = RedisChannelNaming.name(ofChannel: bytes)
            if let made {
                channel.removeAll(keepingCapacity: true)
                channel.append(contentsOf: bytes)
                name = made
            }
            return made
        }
    }
}
