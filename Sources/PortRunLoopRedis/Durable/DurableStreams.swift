import PortRunLoopBus

/// The durable streams a transport reads, and where its reading connection stands
/// (loop thread; ``RedisTransport``'s `LoopState` holds one).
///
/// One stream per durable name, read by one connection: group creations and retention checks
/// first, then one `XREADGROUP` at a time (the consumer's own pending entries, without `BLOCK`,
/// until none is left; then new entries, with `BLOCK` unless the last read came back full), and
/// after each read's delivery the `XACK`s of what it delivered. Replies come in the order of their
/// commands, so ``expected`` says what each one answers.
///
/// Thread-safety: not `Sendable`; used on the transport's loop thread only.
final class DurableStreams {
    /// One stream's state.
    struct Stream {
        /// How many observations want its group (being added, or registered).
        var wanted = 0
        /// How many of them the center registered: read only while some are (0: its entries wait
        /// in the group), so that nothing is read before an observation can receive it.
        var observing = 0
        /// Its group exists, as far as the current reading connection knows.
        var groupReady = false
        /// `XGROUP CREATE` sent on the current reading connection, not answered yet.
        var creating = false
        /// The group existed before (`BUSYGROUP`): what it missed to retention is checked next.
        var checksRetention = false
        /// The consumer's own pending entries are read (from ``pendingCursor``) before new ones.
        var readsPending = true
        var pendingCursor = StreamEntryID.zero
        /// The last entry this process handed to the observations: an entry read again (its
        /// `XACK` lost with a connection) is acknowledged, not delivered twice.
        var lastDelivered: StreamEntryID?
        /// `XINFO STREAM`'s answer, waiting for `XINFO GROUPS`'.
        var info: StreamRetention.StreamInfo?
        /// Callers waiting for the group (an observation being added).
        var waiters: [LoopWaiter] = []
    }

    /// What a reply on the reading connection answers.
    enum Expected {
        case groupCreated(String)
        case streamInfo(String)
        case groupInfo(String)
        case read([String], pending: Bool)
        case acknowledged
    }

    var streams: [String: Stream] = [:]
    var expected: [Expected] = []
    /// An `XREADGROUP` is in flight.
    var reading = false
    /// The last read of new entries came back full for some stream: the next read goes out before
    /// its entries are delivered, without `BLOCK` (``RedisTransport/continueReading(readingAhead:)``).
    var behind = false
    /// IDs delivered and not acknowledged yet, per stream: acknowledged after the drain that
    /// delivers them.
    var acknowledgements: [String: [String]] = [:]

    /// A new reading connection: nothing is known at it, every group is checked again, and the
    /// consumer's pending entries are read first.
    func connectionOpened() {
        for key in Array(streams.keys) {
            streams[key]?.groupReady = false
            streams[key]?.creating = false
            streams[key]?.checksRetention = false
            streams[key]?.readsPending = true
            streams[key]?.pendingCursor = .zero
            streams[key]?.info = nil
        }
        expected.removeAll()
        reading = false
        behind = false
        // Delivered and not acknowledged: the new connection reads them again as pending, and
        // ``Stream/lastDelivered`` acknowledges them without a second delivery.
        acknowledgements.removeAll()
    }

    /// Removes and returns every caller waiting for a group.
    func takeWaiters() -> [LoopWaiter] {
        var all: [LoopWaiter] = []
        for key in Array(streams.keys) {
            all += streams[key]?.waiters ?? []
            streams[key]?.waiters.removeAll()
        }
        return all
    }
}
