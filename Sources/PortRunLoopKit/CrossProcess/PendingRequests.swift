/// The requests of a ``RemoteConnection`` waiting for their replies, by request id.
///
/// Usually one waits at a time (a thread sends its next request once the last one's reply is in),
/// so the first is kept in a slot of its own and only requests made while it waits go into a
/// dictionary: hashing a request id into a dictionary, finding it there and taking it out again
/// would be ~500 instructions of every round trip.
///
/// Thread-safety: a value; the connection's mutex guards the one it holds.
struct PendingRequests {
    private var slot: (id: UInt64, wait: ReplyWait)?
    private var others: [UInt64: ReplyWait] = [:]

    /// Adds the request `id` (ids are never reused).
    mutating func insert(_ wait: ReplyWait, id: UInt64) {
        if slot == nil { slot = (id, wait) } else { others[id] = wait }
    }

    /// The request `id`, if it still waits.
    subscript(id id: UInt64) -> ReplyWait? {
        if let slot, slot.id == id { return slot.wait }
        return others.isEmpty ? nil : others[id]
    }

    /// Forgets the request `id` (its caller has its reply, or gave up).
    mutating func remove(_ id: UInt64) {
        if let current = slot, current.id == id { slot = nil } else if !others.isEmpty { others[id] = nil }
    }

    /// Calls `body` with every waiting request.
    func forEach(_ body: (ReplyWait) -> Void) {
        if let slot { body(slot.wait) }
        for wait in others.values { body(wait) }
    }
}
