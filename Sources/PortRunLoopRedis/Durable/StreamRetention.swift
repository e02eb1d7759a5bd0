import CHiredis

/// What a group missed because its stream was trimmed (`MAXLEN`) past entries it had not read:
/// read from `XINFO STREAM` and `XINFO GROUPS` (Redis 7 counters) when a reading connection finds
/// the group already there.
///
/// How many: the entries trimmed (`entries-added` minus `length`) minus those the group had read
/// before (`entries-read`, which counts from the stream's first entry ever, so a group made at the
/// stream's end starts with what was there). When Redis does not know `entries-read`, a group whose
/// `last-delivered-id` is older than the stream's first entry (`recorded-first-entry-id`) counts as
/// having missed one.
///
/// Thread-safety: a stateless namespace.
enum StreamRetention {
    /// The counters of `XINFO STREAM` this check reads.
    ///
    /// Thread-safety: a value type.
    struct StreamInfo: Sendable {
        var length: Int
        var entriesAdded: Int
        var firstEntryID: StreamEntryID
    }

    /// `XINFO STREAM`'s reply (a flat list of names and values), or nil (an error, or a server
    /// before Redis 7 without the counters).
    static func streamInfo(_ reply: redisReply) -> StreamInfo? {
        let fields = pairs(reply)
        guard let length = fields["length"].flatMap(integer), let added = fields["entries-added"].flatMap(integer),
              let first = fields["recorded-first-entry-id"].flatMap(RedisReply.string).flatMap(StreamEntryID.init) else { return nil }
        return StreamInfo(length: length, entriesAdded: added, firstEntryID: first)
    }

    /// How many entries `group` missed (0: none), from `XINFO GROUPS`' reply and the stream's
    /// counters; nil when the reply has no such group.
    static func missed(group: String, groups reply: redisReply, stream: StreamInfo) -> Int? {
        guard reply.type == REDIS_REPLY_ARRAY, let elements = reply.element else { return nil }
        for index in 0..<reply.elements {
            guard let entry = elements[index]?.pointee else { continue }
            let fields = pairs(entry)
            guard fields["name"].flatMap(RedisReply.string) == group,
                  let delivered = fields["last-delivered-id"].flatMap(RedisReply.string).flatMap(StreamEntryID.init) else { continue }
            let trimmed = stream.entriesAdded - stream.length
            guard let read = fields["entries-read"].flatMap(integer) else { return stream.length > 0 && delivered < stream.firstEntryID ? 1 : 0 }
            return max(0, trimmed - read)
        }
        return nil
    }

    /// A flat reply `[name, value, name, value…]` as a dictionary (the values valid while hiredis
    /// holds the reply).
    private static func pairs(_ reply: redisReply) -> [String: redisReply] {
        guard reply.type == REDIS_REPLY_ARRAY, let elements = reply.element else { return [:] }
        var fields: [String: redisReply] = [:]
        var index = 0
        while index + 1 < reply.elements {
            if let name = elements[index].flatMap({ RedisReply.string($0.pointee) }), let value = elements[index + 1]?.pointee {
                fields[name] = value
            }
            index += 2
        }
        return fields
    }

    private static func integer(_ reply: redisReply) -> Int? {
        reply.type == REDIS_REPLY_INTEGER ? Int(reply.integer) : nil
    }
}
