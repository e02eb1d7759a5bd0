import CHiredis

/// What a reply on the subscribed connection is: a message for the inbox, a confirmation of a
/// (p)subscribe or (p)unsubscribe, an error reply, or something to ignore. Read from hiredis'
/// reply without copying: the bytes it points at are valid while hiredis holds the reply.
///
/// Thread-safety: a value over borrowed bytes, used by the thread inside hiredis' callback.
package enum RedisPush {
    /// A `message` push: the channel and the payload.
    case message(channel: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer)
    /// A `pmessage` push (to a pattern subscription): the channel and the payload.
    case patternMessage(channel: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer)
    /// A `message` or `pmessage` push whose channel or payload is not a string.
    case unreadable(kind: String)
    /// The server confirmed a (p)subscribe (`subscribed`) or (p)unsubscribe; the key is nil when
    /// the confirmation names no channel or pattern as a string.
    case confirmation(SubscriptionKey?, subscribed: Bool)
    /// An error reply, its text.
    case refused(String)
    /// Any other reply (ignored).
    case other

    /// The push `reply` is.
    package init(_ reply: redisReply) {
        guard reply.type == REDIS_REPLY_ARRAY, reply.elements >= 3, let elements = reply.element,
              let kindReply = elements[0]?.pointee, let kind = RedisReply.bytes(kindReply) else {
            self = reply.type == REDIS_REPLY_ERROR ? .refused(RedisReply.string(reply) ?? "") : .other
            return
        }
        if RedisReply.equals(kind, "message") {
            guard let channel = elements[1].flatMap({ RedisReply.bytes($0.pointee) }),
                  let payload = elements[2].flatMap({ RedisReply.bytes($0.pointee) }) else {
                self = .unreadable(kind: "message")
                return
            }
            self = .message(channel: channel, payload: payload)
        } else if RedisReply.equals(kind, "pmessage") {
            guard reply.elements >= 4, let channel = elements[2].flatMap({ RedisReply.bytes($0.pointee) }),
                  let payload = elements[3].flatMap({ RedisReply.bytes($0.pointee) }) else {
                self = .unreadable(kind: "pmessage")
                return
            }
            self = .patternMessage(channel: channel, payload: payload)
        } else if RedisReply.equals(kind, "subscribe") || RedisReply.equals(kind, "unsubscribe") {
            let channel = elements[1].flatMap { RedisReply.string($0.pointee) }
            self = .confirmation(channel.map { .channel($0) }, subscribed: RedisReply.equals(kind, "subscribe"))
        } else if RedisReply.equals(kind, "psubscribe") || RedisReply.equals(kind, "punsubscribe") {
            let pattern = elements[1].flatMap { RedisReply.string($0.pointee) }
            self = .confirmation(pattern.map { .pattern($0) }, subscribed: RedisReply.equals(kind, "psubscribe"))
        } else {
            self = .other
        }
    }
}
